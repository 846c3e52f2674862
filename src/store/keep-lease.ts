import type { Store } from './types.js';

export interface KeepLeaseOptions {
  store: Store;
  key: string;
  owner: string;
  leaseMs: number;
  /** Told once when the lease could not be renewed (lost, or the store failed). */
  onLost?: (reason: string) => void;
  /** The clock the lease was claimed with. @default () => new Date() */
  clock?: () => Date;
}

/**
 * Renew a claimed run's lease every third of its length while work on it goes on, so a handler
 * that runs longer than `leaseMs` is not taken over (and run twice) by another worker. Returns a
 * function that stops renewing. A worker that dies stops renewing, and its lease runs out as before.
 */
export function keepLease(options: KeepLeaseOptions): () => void {
  let reported = false;
  const lost = (reason: string) => {
    if (reported) return;
    reported = true;
    options.onLost?.(reason);
  };
  const timer = setInterval(() => {
    options.store.renewLease(options.key, options.owner, options.leaseMs, options.clock?.()).then(
      (held) => {
        if (!held) lost('the lease was taken over or the run finished elsewhere');
      },
      (error: Error) => lost(`renewing failed: ${error.message}`),
    );
  }, Math.max(options.leaseMs / 3, 10));
  timer.unref();
  return () => clearInterval(timer);
}

import { messageOf } from '../errors/index.js';

export interface KeepRenewingOptions {
  /** How long one renewal holds: renewed every third of it, so two renewals may fail before it runs out. */
  ttlMs: number;
  /** Make one renewal; resolves false when what it renews was lost (taken over, or finished elsewhere). */
  renew: () => Promise<boolean>;
  /** Told once when a renewal was refused or failed. */
  onLost?: (reason: string, error?: unknown) => void;
}

/**
 * The one heartbeat of leased work: renew every third of `ttlMs` while the work goes on, so that
 * work running longer than its lease is not taken over (and done twice) by another worker. Returns
 * a function that stops. A worker that dies stops renewing, and its lease runs out as before.
 */
export function keepRenewing(options: KeepRenewingOptions): () => void {
  let reported = false;
  const lost = (reason: string, error?: unknown) => {
    if (reported) return;
    reported = true;
    options.onLost?.(reason, error);
  };
  const timer = setInterval(
    () => {
      options.renew().then(
        (held) => {
          if (!held) lost('the lease was taken over or the run finished elsewhere');
        },
        (error: unknown) => lost(`renewing failed: ${messageOf(error)}`, error),
      );
    },
    Math.max(options.ttlMs / 3, 10),
  );
  timer.unref();
  return () => clearInterval(timer);
}

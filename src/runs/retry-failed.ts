import type { Run, Store } from '../store/types.js';

/** Which failed runs `retryFailed` puts back in line: one, or all of a kind. */
export interface RetryFailedOptions {
  /** Only this run (any kind): resolves 1 when it was failed and is back in line, else 0. */
  key?: string | undefined;
  /** Only runs of this kind. @default every kind */
  kind?: Run['kind'] | undefined;
  /** The clock the retried runs are due by. @default () => new Date() */
  clock?: () => Date;
  /** Failed runs read per page. @default 100 */
  pageSize?: number;
}

/**
 * Put every failed run (of `kind`, or the one `key`) back to pending, due now; resolves with how many. Pages through
 * all of them, however many: retried runs leave the failed list, so each page reads what is left.
 */
export async function retryFailed(store: Store, options: RetryFailedOptions = {}): Promise<number> {
  const clock = options.clock ?? (() => new Date());
  if (options.key !== undefined) return (await store.retryRun(options.key, clock())) ? 1 : 0;
  const pageSize = options.pageSize ?? 100;
  let count = 0;
  for (;;) {
    const failed = await store.listRuns({ kind: options.kind, status: 'failed', limit: pageSize });
    let retried = 0;
    for (const run of failed) if (await store.retryRun(run.key, clock())) retried += 1;
    count += retried;
    // A run that could not be retried has left the failed list (retried or pruned elsewhere); a
    // page of none retried would be read again and again.
    if (failed.length < pageSize || retried === 0) return count;
  }
}

import { retryFailed } from '../../runs/index.js';
import { LIST_FAILED_RUNS } from '../defaults.js';
import { notInStore, UsageError } from '../exit.js';
import { wholeNumber } from '../flags.js';
import { clip, ERROR_COLUMN_WIDTH, output, outputList, table, type CliIO } from '../io.js';
import { withStore } from '../with-store.js';

export interface RunsListFlags {
  failed?: boolean;
  limit: string;
  json?: boolean;
}

/** `checkout-kit runs`: handler runs (fulfillment and event dispatch), newest first. */
export async function listRuns(options: RunsListFlags, io: CliIO): Promise<void> {
  const limit = wholeNumber('--limit', { min: 1 })(options.limit);
  const runs = await withStore(io, (store) => store.listRuns({ status: options.failed ? 'failed' : undefined, limit: limit + 1, newestFirst: true }));
  outputList(io, options.json ?? false, runs, limit, (list) =>
    table(
      // Only a pending run is tried again by itself: a time beside a failed one would read as a retry to come.
      list.map((r) => ({
        key: r.key,
        status: r.status,
        attempts: r.attempts,
        next: r.status === 'pending' ? r.nextAttemptAt : undefined,
        error: clip(r.lastError, ERROR_COLUMN_WIDTH),
      })),
      ['key', 'status', 'attempts', 'next', 'error'],
    ),
  );
}

/** `checkout-kit retry [key] | --all`: put failed runs back in line. */
export async function retry(key: string | undefined, options: { all?: boolean; json?: boolean }, io: CliIO): Promise<void> {
  if (!key && !options.all) throw new UsageError(`give a run key (see \`${LIST_FAILED_RUNS}\`) or --all`);
  if (key && options.all) throw new UsageError(`give a run key or --all, not both: ${key} alone, or every failed run?`);
  // Every failed run, page by page, however many (`key` undefined with --all).
  const { retried, status } = await withStore(io, async (store) => {
    const retried = await retryFailed(store, { key });
    // Nothing put back for one key: say why (a typo'd key is not "0 runs", it is no run).
    if (!key || retried > 0) return { retried, status: undefined };
    const run = await store.getRun(key);
    if (!run) throw notInStore('run', key, `\`${LIST_FAILED_RUNS}\` for the keys of failed runs`);
    return { retried, status: run.status };
  });
  output(io, options.json ?? false, { retried, ...(status ? { status } : {}) }, ({ retried: n }) =>
    status ? `run ${key} is ${status}, not failed: nothing to put back` : `${n} run(s) put back in line`,
  );
}

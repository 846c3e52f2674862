import { retryFailed } from '../../runs/index.js';
import { notInStore, UsageError } from '../exit.js';
import { clip, ERROR_COLUMN_WIDTH, output, table } from '../io.js';
import type { Register } from '../register.js';
import { withStore } from '../runtime.js';

/** The command that lists runs failed for good; other commands point the user at it. */
export const LIST_FAILED_RUNS = 'checkout-kit runs --failed';

/** `checkout-kit runs` and `checkout-kit retry [key] | --all`: handler runs, and putting failed ones back in line. */
export const registerRuns: Register = (program, io) => {
  program
    .command('runs')
    .description('list handler runs (fulfillment and event dispatch)')
    .option('--failed', 'only runs that failed for good')
    .option('--json', 'JSON output')
    .action(async (options: { failed?: boolean; json?: boolean }) => {
      const runs = await withStore(io, (store) => store.listRuns({ status: options.failed ? 'failed' : undefined, limit: 1000 }));
      output(io, options.json ?? false, runs, (list) => table(list.map((r) => ({ key: r.key, status: r.status, attempts: r.attempts, next: r.nextAttemptAt, error: clip(r.lastError, ERROR_COLUMN_WIDTH) })), ['key', 'status', 'attempts', 'next', 'error']));
    });
  program
    .command('retry')
    .description('put a failed run (or --all failed runs) back in line; the next serve or reconcile runs it')
    .argument('[key]', `the run's key (see \`${LIST_FAILED_RUNS}\`)`)
    .option('--all', 'every failed run')
    .option('--json', 'JSON output')
    .action(async (key: string | undefined, options: { all?: boolean; json?: boolean }) => {
      if (!key && !options.all) throw new UsageError(`give a run key (see \`${LIST_FAILED_RUNS}\`) or --all`);
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
    });
};

import type { RunsListFlags } from '../actions/runs.js';
import { LIST_FAILED_RUNS } from '../defaults.js';
import { storedId } from '../flags.js';
import type { Register } from '../register.js';

/** `checkout-kit runs` and `checkout-kit retry [key] | --all`: handler runs, and putting failed ones back in line. */
export const registerRuns: Register = (program, io) => {
  program
    .command('runs')
    .description('list handler runs (fulfillment and event dispatch), newest first')
    .option('--failed', 'only runs that failed for good')
    .option('--limit <n>', 'at most this many', '1000')
    .option('--json', 'JSON output')
    .action(async (options: RunsListFlags) => (await import('../actions/runs.js')).listRuns(options, io));
  program
    .command('retry')
    .description('put a failed run (or --all failed runs) back in line; the next serve or reconcile runs it')
    .argument('[key]', `the run's key (see \`${LIST_FAILED_RUNS}\`)`, storedId)
    .option('--all', 'every failed run')
    .option('--json', 'JSON output')
    .action(async (key: string | undefined, options: { all?: boolean; json?: boolean }) => (await import('../actions/runs.js')).retry(key, options, io));
};

import type { ReconcileFlags } from '../actions/reconcile.js';
import type { Register } from '../register.js';

export const registerReconcile: Register = (program, io, setExit) => {
  program
    .command('reconcile')
    .description('one reconcile pass (for cron): poll what the webhooks may have missed')
    .option('--json', 'print the summary as JSON')
    .option('--older-than <duration>', 'poll resources whose last news is older than this', '10m')
    .option('--concurrency <n>', 'polls in flight at once', '8')
    .action(async (options: ReconcileFlags) => (await import('../actions/reconcile.js')).reconcileOnce(options, io, setExit));
};

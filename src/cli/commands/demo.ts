import type { DemoFlags } from '../actions/demo.js';
import { probability } from '../flags.js';
import type { Register } from '../register.js';

export const registerDemo: Register = (program, io, setExit) => {
  program
    .command('demo')
    .description('the whole story on embedded defaults: sandbox with faulty webhooks, receiver, checkout, payments, reconcile')
    .option('--orders <n>', 'orders to create (cycling through the scenarios)', '12')
    .option('--drop <p>', 'probability a webhook is never delivered', probability('--drop'), 0.3)
    .option('--duplicate <p>', 'probability a webhook is delivered twice', probability('--duplicate'), 0.3)
    .option('--no-reorder', 'deliver webhooks in order')
    .option('--data <dir>', 'keep the data in this folder (default: a temp folder, removed)')
    .option('--json', 'JSON output')
    .action(async (options: DemoFlags) => (await import('../actions/demo.js')).demo(options, io, setExit));
};

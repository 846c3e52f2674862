import { Option } from '../commander.js';
import { DEFAULT_FRAMEWORK, WEB_FRAMEWORKS } from '../../scaffold/frameworks.js';
import type { InitFlags } from '../actions/init.js';
import type { Register } from '../register.js';

export const registerInit: Register = (program, io) => {
  program
    .command('init')
    .description('scaffold a merchant backend (server, fulfillment handlers, tests, deploy files) into dir; never overwrites without --force')
    .argument('[dir]', 'the folder to scaffold into (default: the current one)')
    .option('--force', 'overwrite files that already exist (package.json is merged, never overwritten)')
    .addOption(new Option('--framework <name>', `the web framework of the server file: ${WEB_FRAMEWORKS.join(', ')}`).default(DEFAULT_FRAMEWORK))
    .option(
      '--partner',
      'scaffold a partner platform instead (fastify): tenants onboarded by POST /tenants, a checkout per tenant, one webhook route for every tenant',
    )
    .option('--json', 'print what was written and skipped as JSON')
    .action(async (dir: string | undefined, options: InitFlags) => (await import('../actions/init.js')).init(dir, options, io));
};

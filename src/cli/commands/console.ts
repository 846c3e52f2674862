import type { ConsoleFlags } from '../actions/console.js';
import { DEFAULT_CONSOLE_PORT } from '../defaults.js';
import { listenHost, moduleFile, portNumber } from '../flags.js';
import type { Register } from '../register.js';

export const registerConsole: Register = (program, io) => {
  program
    .command('console')
    .description('the operator console against the configured store (CHECKOUT_STORE), with /metrics, /healthz and /readyz')
    .option('--port <n>', `port (default ${DEFAULT_CONSOLE_PORT})`, portNumber('--port'))
    .option('--host <host>', 'interface to listen on; anything but loopback needs CHECKOUT_CONSOLE_TOKEN', listenHost('--host'), '127.0.0.1')
    .option(
      '--handlers <file>',
      'the fulfillment module, for "Reconcile now" and immediate retries (default: CHECKOUT_HANDLERS or ./fulfillment.*, when present)',
      moduleFile('--handlers'),
    )
    .action(async (options: ConsoleFlags) => (await import('../actions/console.js')).runConsole(options, io));
};

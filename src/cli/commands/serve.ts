import type { ServeFlags } from '../actions/serve.js';
import type { Register } from '../register.js';
import { listenHost, moduleFile, portNumber } from '../flags.js';

export const registerServe: Register = (program, io) => {
  program
    .command('serve')
    .description('run the webhook receiver (POST /webhooks/checkout) and the checkout routes')
    .option('--port <n>', 'port (PORT)', portNumber('--port'))
    .option('--host <host>', 'interface to listen on (HOST)', listenHost('--host'))
    .option('--handlers <file>', 'the fulfillment module (CHECKOUT_HANDLERS)', moduleFile('--handlers'))
    // Checked as CHECKOUT_PUBLIC_URL is, first thing in the action (its rule is the configuration's, loaded there).
    .option('--public-url <url>', "the shop's public URL for success and cancel links (CHECKOUT_PUBLIC_URL)")
    .option('--console', 'also serve the operator console under /checkout-kit/ (with CHECKOUT_CONSOLE_TOKEN set, anyone with it; else this machine only)')
    .action(async (options: ServeFlags) => (await import('../actions/serve.js')).serve(options, io));
};

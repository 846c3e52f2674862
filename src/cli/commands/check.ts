import { CHECK_SCENARIO_NAMES, PARTNER_SCENARIO_NAMES } from '../../check/scenarios.js';
import type { CheckFlags } from '../actions/check.js';
import { portNumber } from '../flags.js';
import type { Register } from '../register.js';

/** `checkout-kit check --against URL`: prove a backend against every scenario before going live. */
export const registerCheck: Register = (program, io, setExit) => {
  program
    .command('check')
    .description(
      'prove a backend against every scenario (paid, partial, over, under, expired, late, duplicates, reordering, a lost webhook, a stale signature) through the sandbox',
    )
    .requiredOption('--against <url>', "the backend's webhook URL, e.g. http://127.0.0.1:3000/webhooks/checkout")
    .option(
      '--start <command>',
      'start the backend with the sandbox’s keys, a scratch store and a handler-call record (PORT/HOST from --against); stopped at the end',
    )
    .option(
      '--checkout-url <url>',
      "the backend's checkout route (POST { orderId, amount, email } → 303 to checkoutUrl); default: /checkout on the --against origin",
    )
    .option('--no-checkout', 'create payments at the sandbox directly (a lost webhook then cannot be caught)')
    .option('--record <file>', 'the handler-call record the backend writes (CHECKOUT_CHECK_RECORD)')
    .option('--store <url>', "the backend's store (CHECKOUT_STORE)")
    .option('--data <dir>', 'the sandbox data folder (default .sandbox; with --start a scratch folder)')
    .option(
      '--sandbox-port <n>',
      'the sandbox port (default: the port of CHECKOUT_BASE_URL, else 4010; with --start any free port)',
      portNumber('--sandbox-port'),
    )
    .option('--reconcile <command>', "the backend's reconcile pass (default: checkout-kit reconcile --older-than 0)")
    .option('--no-reconcile', 'run no reconcile pass (a lost webhook is then never caught)')
    .option('--partner', `the backend is a partner platform: check onboards two tenants into its store and runs ${PARTNER_SCENARIO_NAMES.join(', ')}`)
    .option('--only <scenarios>', `comma-separated, from: ${CHECK_SCENARIO_NAMES.join(', ')} (with --partner: ${PARTNER_SCENARIO_NAMES.join(', ')})`)
    .option('--timeout <duration>', 'how long to wait for the handlers a scenario expects', '20s')
    .option('--settle <duration>', 'how long to keep watching for calls that must not come', '1s')
    .option('--json', 'print the report as JSON')
    .action(async (flags: CheckFlags) => (await import('../actions/check.js')).check(flags, io, setExit));
};

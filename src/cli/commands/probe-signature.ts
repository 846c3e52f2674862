import type { ProbeFlags } from '../actions/probe-signature.js';
import { DEFAULT_CAPTURE_DIR } from '../defaults.js';
import type { Register } from '../register.js';

/** `checkout-kit probe-signature`: which scheme signed the captured deliveries (issue item 6). */
export const registerProbeSignature: Register = (program, io, setExit) => {
  program
    .command('probe-signature')
    .description('find how captured deliveries are signed: Standard Webhooks, Stripe-style t=,v1= or a plain HMAC-SHA256/512 (hex or base64) in any header')
    .requiredOption('--secret <secret>', "the endpoint's webhook secret, as the service shows it")
    .option('--dir <dir>', 'folder of captures written by `checkout-kit capture`', DEFAULT_CAPTURE_DIR)
    .option('--json', 'JSON output')
    .action(async (flags: ProbeFlags) => (await import('../actions/probe-signature.js')).probeSignatureOf(flags, io, setExit));
};

import type { ReplayFlags } from '../actions/replay.js';
import { eventType, storedId } from '../flags.js';
import type { Register } from '../register.js';

/** `checkout-kit replay`: resend stored events byte for byte, freshly signed (issue items 4). */
export const registerReplay: Register = (program, io, setExit) => {
  program
    .command('replay')
    .description("resend stored events from the receiver's store: the original body byte for byte, freshly signed (Standard Webhooks)")
    .requiredOption('--to <url>', 'where to send them, e.g. http://127.0.0.1:3000/webhooks/checkout')
    .option('--event <id>', 'this stored event (repeatable)', (value: string, previous: string[]) => [...previous, storedId(value)], [] as string[])
    .option('--since <time>', 'events received at or after this ISO time, or this long ago (10m, 2h, 1d)')
    .option('--type <type>', 'events of this type, e.g. payment.paid', eventType('--type'))
    .option('--all', 'every stored event')
    .option('--secret <secret>', 'sign with this secret (default: the first of CHECKOUT_WEBHOOK_SECRET), in the CHECKOUT_WEBHOOK_SCHEME scheme')
    .option('--json', 'JSON output')
    .action(async (flags: ReplayFlags) => (await import('../actions/replay.js')).replay(flags, io, setExit));
};

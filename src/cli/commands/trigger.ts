import { SCENARIOS } from '../../devtools/scenarios.js';
import type { EVENT_TYPES } from '../../schemas/index.js';
import type { TriggerFlags } from '../actions/trigger.js';
import { DEFAULT_SANDBOX_DATA as DEFAULT_DATA } from '../defaults.js';
import type { Register } from '../register.js';

/**
 * The event types, for the help text: `EVENT_TYPES` written out, so that defining the command loads
 * no schema (zod). `EventTypesMatch` below (exported so that it is checked) stops the build when the two lists differ, order included.
 */
const EVENT_TYPE_NAMES = [
  'payment.created',
  'payment.partially_paid',
  'payment.paid',
  'payment.overpaid',
  'payment.expired',
  'invoice.created',
  'invoice.partially_paid',
  'invoice.paid',
  'invoice.overpaid',
  'invoice.expired',
] as const;
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Holds<T extends true> = T;
export type EventTypesMatch = Holds<Same<typeof EVENT_TYPE_NAMES, typeof EVENT_TYPES>>;

/** `checkout-kit trigger`: drive the sandbox through a scenario or to an event type, or send one sample signed event. */
export const registerTrigger: Register = (program, io, setExit) => {
  program
    .command('trigger')
    .description(
      `drive a running sandbox through a scenario (${SCENARIOS.join(', ')}), or make it emit an event type (payment.paid, invoice.expired, …) about a real payment or invoice; with no sandbox, send a sample signed event of that type to --to`,
    )
    .argument('<scenario>', `one of the scenarios above, or an event type: ${EVENT_TYPE_NAMES.join(', ')}`)
    .option('--to <url>', 'also deliver the events here (required by duplicate-storm and by sample events)')
    .option('--sandbox <url>', 'the sandbox URL (default: baseUrl in its credentials.json)')
    .option('--data <dir>', `the sandbox's data folder, holding credentials.json (default: ${DEFAULT_DATA})`)
    .option('--secret <whsec>', "sign with this secret (default: the sandbox's webhookSecret, or CHECKOUT_WEBHOOK_SECRET for sample events)")
    .option('--json', 'JSON output')
    .action(async (name: string, flags: TriggerFlags) => (await import('../actions/trigger.js')).trigger(name, flags, io, setExit));
};

import type { EventsListFlags } from '../actions/events.js';
import { eventType, sinceTime, storedId } from '../flags.js';
import type { Register } from '../register.js';

/** `checkout-kit events list | show <id> | dead-letters`: the stored webhook events. */
export const registerEvents: Register = (program, io) => {
  const events = program.command('events').description('inspect stored webhook events');
  events
    .command('list')
    .description('newest first')
    .option('--status <status>', 'pending, running, done or failed')
    .option('--type <type>', 'only this event type', eventType('--type'))
    .option('--since <time>', 'received at or after this ISO time, or this long ago (10m, 2h, 1d)', sinceTime('--since'))
    .option('--limit <n>', 'at most this many', '50')
    .option('--json', 'JSON output')
    .action(async (options: EventsListFlags) => (await import('../actions/events.js')).listEvents(options, io));
  events
    .command('show')
    .description('one event with its raw body')
    .argument('<id>', 'the event id (see `checkout-kit events list`)', storedId)
    .option('--json', 'JSON output')
    .action(async (id: string, options: { json?: boolean }) => (await import('../actions/events.js')).showEvent(id, options, io));
  events
    .command('dead-letters')
    .description("deliveries kept for inspection, newest first: verified but unparseable, or refused with the raw-body doctor's diagnosis")
    .option('--limit <n>', 'at most this many', '100')
    .option('--json', 'JSON output')
    .action(async (options: { limit: string; json?: boolean }) => (await import('../actions/events.js')).listDeadLetters(options, io));
};

import { runKeys, RUN_STATUSES } from '../../runs/index.js';
import type { Run } from '../../store/index.js';
import { notInStore, UsageError } from '../exit.js';
import { sinceTime, wholeNumber } from '../flags.js';
import { clip, ERROR_COLUMN_WIDTH, output, table } from '../io.js';
import type { Register } from '../register.js';
import { withStore } from '../runtime.js';

const STATUSES = RUN_STATUSES;
function runStatus(value: string | undefined): Run['status'] | undefined {
  if (value === undefined) return undefined;
  if (!(STATUSES as readonly string[]).includes(value)) throw new UsageError(`--status must be one of ${STATUSES.join(', ')}`);
  return value as Run['status'];
}

/** One dead letter: id, time and code on a line, then the explanation (the doctor's cause, then its fix). */
function deadLetterLines(letter: { id: string; receivedAt: string; reason: string }): string {
  const split = letter.reason.indexOf(': ');
  const head = split < 0 ? letter.reason : letter.reason.slice(0, split);
  const rest = split < 0 ? '' : letter.reason.slice(split + 2);
  const explanation = rest.split(/ (?=Fix: )/).map((line) => `  ${line}`);
  return [`${letter.id}  ${letter.receivedAt}  ${head}`, ...explanation].join('\n');
}

/** `checkout-kit events list | show <id> | dead-letters`: the stored webhook events. */
export const registerEvents: Register = (program, io) => {
  const events = program.command('events').description('inspect stored webhook events');
  events
    .command('list')
    .description('newest first')
    .option('--status <status>', 'pending, running, done or failed')
    .option('--type <type>', 'only this event type')
    .option('--since <time>', 'received at or after this ISO time, or this long ago (10m, 2h, 1d)', sinceTime('--since'))
    .option('--limit <n>', 'at most this many', '50')
    .option('--json', 'JSON output')
    .action(async (options: { status?: string; type?: string; since?: string; limit: string; json?: boolean }) => {
      const status = runStatus(options.status);
      const limit = wholeNumber('--limit', { min: 1 })(options.limit);
      const rows = await withStore(io, (store) => store.listEvents({ status, type: options.type, since: options.since, limit }));
      output(io, options.json ?? false, rows, (list) =>
        table(
          list.map((e) => ({ id: e.id, type: e.type, received: e.receivedAt, resource: e.resourceId, status: e.run?.status, attempts: e.run?.attempts, error: clip(e.run?.lastError, ERROR_COLUMN_WIDTH) })),
          ['id', 'type', 'received', 'resource', 'status', 'attempts', 'error'],
        ),
      );
    });
  events
    .command('show')
    .description('one event with its raw body')
    .argument('<id>', 'the event id (see `checkout-kit events list`)')
    .option('--json', 'JSON output')
    .action(async (id: string, options: { json?: boolean }) => {
      const found = await withStore(io, async (store) => ({ event: await store.getEvent(id), run: await store.getRun(runKeys.event(id)) }));
      if (!found.event) throw notInStore('event', id, '`checkout-kit events list`');
      output(io, options.json ?? false, found, ({ event, run }) =>
        [`id:       ${event!.id}`, `type:     ${event!.type}`, `received: ${event!.receivedAt}`, `status:   ${run?.status ?? '-'} (attempts ${run?.attempts ?? 0})`, run?.lastError ? `error:    ${run.lastError}` : '', '', event!.body ?? '(payload pruned)']
          .filter((line, i) => line !== '' || i === 5)
          .join('\n'),
      );
    });
  events
    .command('dead-letters')
    .description('deliveries kept for inspection: verified but unparseable, or refused with the raw-body doctor\'s diagnosis')
    .option('--json', 'JSON output')
    .action(async (options: { json?: boolean }) => {
      const letters = await withStore(io, (store) => store.listDeadLetters(100));
      output(io, options.json ?? false, letters, (list) => (list.length === 0 ? '(none)' : list.map(deadLetterLines).join('\n\n')));
    });
};

import { runKeys, RUN_STATUSES } from '../../domain/index.js';
import { printable } from '../../errors/index.js';
import type { Run } from '../../store/index.js';
import { notInStore, UsageError } from '../exit.js';
import { wholeNumber } from '../flags.js';
import { clip, ERROR_COLUMN_WIDTH, output, outputList, table, type CliIO } from '../io.js';
import { withStore } from '../with-store.js';

export interface EventsListFlags {
  status?: string;
  type?: string;
  since?: string;
  limit: string;
  json?: boolean;
}

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

/** `checkout-kit events list`: newest first. */
export async function listEvents(options: EventsListFlags, io: CliIO): Promise<void> {
  const status = runStatus(options.status);
  const limit = wholeNumber('--limit', { min: 1 })(options.limit);
  const rows = await withStore(io, (store) => store.listEvents({ status, type: options.type, since: options.since, limit: limit + 1 }));
  outputList(io, options.json ?? false, rows, limit, (list) =>
    table(
      list.map((e) => ({
        id: e.id,
        type: e.type,
        received: e.receivedAt,
        resource: e.resourceId,
        status: e.run?.status,
        attempts: e.run?.attempts,
        error: clip(e.run?.lastError, ERROR_COLUMN_WIDTH),
      })),
      ['id', 'type', 'received', 'resource', 'status', 'attempts', 'error'],
    ),
  );
}

/** `checkout-kit events show <id>`: one event with its raw body. */
export async function showEvent(id: string, options: { json?: boolean }, io: CliIO): Promise<void> {
  const found = await withStore(io, async (store) => ({ event: await store.getEvent(id), run: await store.getRun(runKeys.event(id)) }));
  if (!found.event) throw notInStore('event', id, '`checkout-kit events list`');
  // Each line but the body's is one line: a line break stored in an id or an error cannot add a line of its own.
  output(io, options.json ?? false, found, ({ event, run }) =>
    [
      `id:       ${printable(event!.id)}`,
      `type:     ${printable(event!.type)}`,
      `received: ${event!.receivedAt}`,
      `status:   ${run?.status ?? '-'} (attempts ${run?.attempts ?? 0})`,
      run?.lastError ? `error:    ${printable(run.lastError)}` : '',
      '',
      event!.body ?? '(payload pruned)',
    ]
      .filter((line, i) => line !== '' || i === 5)
      .join('\n'),
  );
}

/** `checkout-kit events dead-letters`: deliveries kept for inspection. */
export async function listDeadLetters(options: { limit: string; json?: boolean }, io: CliIO): Promise<void> {
  const limit = wholeNumber('--limit', { min: 1 })(options.limit);
  const letters = await withStore(io, (store) => store.listDeadLetters(limit + 1));
  outputList(io, options.json ?? false, letters, limit, (list) => (list.length === 0 ? '(none)' : list.map(deadLetterLines).join('\n\n')));
}

import type { Command } from 'commander';
import { loadConfig } from '../../config/index.js';
import { openStore } from '../../store/open.js';
import type { ResourceKind, Run, Store } from '../../store/index.js';
import { EXIT, UsageError } from '../exit.js';
import { output, table, writeLine, type CliIO } from '../io.js';
import type { Register } from '../program.js';

async function withStore<T>(io: CliIO, work: (store: Store) => Promise<T>): Promise<T> {
  const config = loadConfig({ env: io.env, cwd: io.cwd });
  const store = await openStore(config.store, { cwd: io.cwd });
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

const STATUSES = ['pending', 'running', 'done', 'failed'] as const;
function runStatus(value: string | undefined): Run['status'] | undefined {
  if (value === undefined) return undefined;
  if (!(STATUSES as readonly string[]).includes(value)) throw new UsageError(`--status must be one of ${STATUSES.join(', ')}`);
  return value as Run['status'];
}
const limitOf = (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`--limit must be a positive whole number, got "${value}"`);
  return n;
};

/** One dead letter: id, time and code on a line, then the explanation (the doctor's cause, then its fix). */
function deadLetterLines(letter: { id: string; receivedAt: string; reason: string }): string {
  const split = letter.reason.indexOf(': ');
  const head = split < 0 ? letter.reason : letter.reason.slice(0, split);
  const rest = split < 0 ? '' : letter.reason.slice(split + 2);
  const explanation = rest.split(/ (?=Fix: )/).map((line) => `  ${line}`);
  return [`${letter.id}  ${letter.receivedAt}  ${head}`, ...explanation].join('\n');
}

function registerEvents(program: Command, io: CliIO, setExit: (code: number) => void) {
  const events = program.command('events').description('inspect stored webhook events');
  events
    .command('list')
    .description('newest first')
    .option('--status <status>', 'pending, running, done or failed')
    .option('--type <type>', 'only this event type')
    .option('--since <time>', 'received at or after this ISO time')
    .option('--limit <n>', 'at most this many', '50')
    .option('--json', 'JSON output')
    .action(async (options: { status?: string; type?: string; since?: string; limit: string; json?: boolean }) => {
      const status = runStatus(options.status);
      const rows = await withStore(io, (store) => store.listEvents({ status, type: options.type, since: options.since, limit: limitOf(options.limit) }));
      output(io, options.json ?? false, rows, (list) =>
        table(
          list.map((e) => ({ id: e.id, type: e.type, received: e.receivedAt, resource: e.resourceId, status: e.run?.status, attempts: e.run?.attempts, error: e.run?.lastError?.slice(0, 60) })),
          ['id', 'type', 'received', 'resource', 'status', 'attempts', 'error'],
        ),
      );
    });
  events
    .command('show <id>')
    .description('one event with its raw body')
    .option('--json', 'JSON output')
    .action(async (id: string, options: { json?: boolean }) => {
      const found = await withStore(io, async (store) => ({ event: await store.getEvent(id), run: await store.getRun(`event:${id}`) }));
      if (!found.event) {
        writeLine(io.stderr, `checkout-kit: no event ${id} in the store`);
        setExit(EXIT.failures);
        return;
      }
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
}

function registerResources(program: Command, io: CliIO, setExit: (code: number) => void, kind: ResourceKind) {
  const command = program.command(`${kind}s`).description(`inspect ${kind}s the store follows`);
  command
    .command('list')
    .option('--open', 'only those still awaiting an outcome')
    .option('--limit <n>', 'at most this many', '100')
    .option('--json', 'JSON output')
    .action(async (options: { open?: boolean; limit: string; json?: boolean }) => {
      const rows = await withStore(io, (store) => store.listResources({ kind, open: options.open ? true : undefined, limit: limitOf(options.limit) }));
      output(io, options.json ?? false, rows, (list) =>
        table(
          list.map((r) => ({ id: r.id, order: r.orderId, outcome: r.outcome, 'learned by': r.outcomeSource, open: r.open ? 'yes' : 'no', 'last news': r.lastNewsAt })),
          ['id', 'order', 'outcome', 'learned by', 'open', 'last news'],
        ),
      );
    });
  command
    .command('show <id>')
    .option('--json', 'JSON output')
    .action(async (id: string, options: { json?: boolean }) => {
      const found = await withStore(io, async (store) => {
        const record = await store.getResource(kind, id);
        const runs = await Promise.all(['paid', 'overpaid', 'underpaid', 'expired'].map((outcome) => store.getRun(`${kind}:${id}:${outcome}`)));
        return { record, runs: runs.filter((run) => run !== undefined) };
      });
      if (!found.record) {
        writeLine(io.stderr, `checkout-kit: no ${kind} ${id} in the store`);
        setExit(EXIT.failures);
        return;
      }
      output(io, options.json ?? false, found, ({ record, runs }) =>
        [
          `${kind} ${record!.id}${record!.orderId ? ` (order ${record!.orderId})` : ''}`,
          `outcome: ${record!.outcome}${record!.outcomeSource ? ` (learned by ${record!.outcomeSource})` : ''}, ${record!.open ? 'open' : 'closed'}`,
          `last news: ${record!.lastNewsAt}`,
          table(runs.map((r) => ({ handler: r.key, status: r.status, attempts: r.attempts, completed: r.completedAt, error: r.lastError })), ['handler', 'status', 'attempts', 'completed', 'error']),
        ].join('\n'),
      );
    });
}

/** The command that lists runs failed for good; other commands point the user at it. */
export const LIST_FAILED_RUNS = 'checkout-kit runs --failed';

function registerRuns(program: Command, io: CliIO) {
  program
    .command('runs')
    .description('list handler runs (fulfillment and event dispatch)')
    .option('--failed', 'only runs that failed for good')
    .option('--json', 'JSON output')
    .action(async (options: { failed?: boolean; json?: boolean }) => {
      const runs = await withStore(io, (store) => store.listRuns({ status: options.failed ? 'failed' : undefined, limit: 1000 }));
      output(io, options.json ?? false, runs, (list) => table(list.map((r) => ({ key: r.key, status: r.status, attempts: r.attempts, next: r.nextAttemptAt, error: r.lastError?.slice(0, 60) })), ['key', 'status', 'attempts', 'next', 'error']));
    });
  program
    .command('retry [key]')
    .description('put a failed run (or --all failed runs) back in line; the next serve or reconcile runs it')
    .option('--all', 'every failed run')
    .option('--json', 'JSON output')
    .action(async (key: string | undefined, options: { all?: boolean; json?: boolean }) => {
      if (!key && !options.all) throw new UsageError(`give a run key (see \`${LIST_FAILED_RUNS}\`) or --all`);
      const retried = await withStore(io, async (store) => {
        const keys = key ? [key] : (await store.listRuns({ status: 'failed', limit: 100_000 })).map((run) => run.key);
        let count = 0;
        for (const k of keys) if (await store.retryRun(k)) count += 1;
        return count;
      });
      output(io, options.json ?? false, { retried }, ({ retried: n }) => `${n} run(s) put back in line`);
    });
}

export const registerInspect: Register = (program, io, setExit) => {
  registerEvents(program, io, setExit);
  registerResources(program, io, setExit, 'payment');
  registerResources(program, io, setExit, 'invoice');
  registerRuns(program, io);
};

import type { Command } from 'commander';
import { resourceRuns } from '../../runs/index.js';
import type { ResourceKind } from '../../store/index.js';
import { notInStore } from '../exit.js';
import { wholeNumber } from '../flags.js';
import { output, table, type CliIO } from '../io.js';
import type { Register } from '../register.js';
import { withStore } from '../runtime.js';

function registerResourceKind(program: Command, io: CliIO, kind: ResourceKind) {
  const command = program.command(`${kind}s`).description(`inspect ${kind}s the store follows`);
  command
    .command('list')
    .description(`the ${kind}s the store follows: order, outcome, who learned it, open or closed, last news`)
    .option('--open', 'only those still awaiting an outcome')
    .option('--limit <n>', 'at most this many', '100')
    .option('--json', 'JSON output')
    .action(async (options: { open?: boolean; limit: string; json?: boolean }) => {
      const limit = wholeNumber('--limit', { min: 1 })(options.limit);
      const rows = await withStore(io, (store) => store.listResources({ kind, open: options.open ? true : undefined, limit }));
      output(io, options.json ?? false, rows, (list) =>
        table(
          list.map((r) => ({ id: r.id, order: r.orderId, outcome: r.outcome, 'learned by': r.outcomeSource, open: r.open ? 'yes' : 'no', 'last news': r.lastNewsAt })),
          ['id', 'order', 'outcome', 'learned by', 'open', 'last news'],
        ),
      );
    });
  command
    .command('show')
    .description(`one ${kind}: its order, outcome, last news and handler runs with their errors`)
    .argument('<id>', `the ${kind} id (see \`checkout-kit ${kind}s list\`)`)
    .option('--json', 'JSON output')
    .action(async (id: string, options: { json?: boolean }) => {
      const found = await withStore(io, async (store) => {
        const record = await store.getResource(kind, id);
        return { record, runs: await resourceRuns(store, kind, id) };
      });
      if (!found.record) throw notInStore(kind, id, `\`checkout-kit ${kind}s list\``);
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

/** `checkout-kit payments …` and `checkout-kit invoices …` (`list`, `show <id>`): the resources the store follows. */
export const registerResources: Register = (program, io) => {
  registerResourceKind(program, io, 'payment');
  registerResourceKind(program, io, 'invoice');
};

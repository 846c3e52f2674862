import { resourceRuns } from '../../runs/resource-runs.js';
import type { ResourceKind } from '../../store/index.js';
import { notInStore } from '../exit.js';
import { wholeNumber } from '../flags.js';
import { output, table, type CliIO } from '../io.js';
import { withStore } from '../with-store.js';

export interface ResourceListFlags {
  open?: boolean;
  limit: string;
  json?: boolean;
}

/** `checkout-kit payments list` / `invoices list`: the resources of `kind` the store follows. */
export async function listResources(kind: ResourceKind, options: ResourceListFlags, io: CliIO): Promise<void> {
  const limit = wholeNumber('--limit', { min: 1 })(options.limit);
  const rows = await withStore(io, (store) => store.listResources({ kind, open: options.open ? true : undefined, limit }));
  output(io, options.json ?? false, rows, (list) =>
    table(
      list.map((r) => ({
        id: r.id,
        order: r.orderId,
        outcome: r.outcome,
        'learned by': r.outcomeSource,
        open: r.open ? 'yes' : 'no',
        'last news': r.lastNewsAt,
      })),
      ['id', 'order', 'outcome', 'learned by', 'open', 'last news'],
    ),
  );
}

/** `checkout-kit payments show <id>` / `invoices show <id>`: one resource with its handler runs. */
export async function showResource(kind: ResourceKind, id: string, options: { json?: boolean }, io: CliIO): Promise<void> {
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
      table(
        runs.map((r) => ({ handler: r.key, status: r.status, attempts: r.attempts, completed: r.completedAt, error: r.lastError })),
        ['handler', 'status', 'attempts', 'completed', 'error'],
      ),
    ].join('\n'),
  );
}

import { printable } from '../../errors/index.js';
import { resourceRuns } from '../../runs/resource-runs.js';
import type { ResourceKind, ResourceRecord } from '../../store/index.js';
import { notInStore, UsageError } from '../exit.js';
import { wholeNumber } from '../flags.js';
import { output, outputList, table, type CliIO } from '../io.js';
import { withStore } from '../with-store.js';

export interface ResourceListFlags {
  open?: boolean;
  limit: string;
  json?: boolean;
}

/** `checkout-kit payments list` / `invoices list`: the resources of `kind` the store follows. */
export async function listResources(kind: ResourceKind, options: ResourceListFlags, io: CliIO): Promise<void> {
  const limit = wholeNumber('--limit', { min: 1 })(options.limit);
  const rows = await withStore(io, (store) => store.listResources({ kind, open: options.open ? true : undefined, limit: limit + 1, newestFirst: true }));
  outputList(io, options.json ?? false, rows, limit, (list) =>
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

/** The most ids a `show` that matched several resources names. */
const MATCHES_NAMED = 10;

/**
 * `checkout-kit payments show <id>` / `invoices show <id>`: one resource with its handler runs.
 * `id` is the resource's id, or what the console's search finds it by (its order id, e-mail or one
 * of its events' ids): an operator starts from the order a buyer quotes.
 */
export async function showResource(kind: ResourceKind, id: string, options: { json?: boolean }, io: CliIO): Promise<void> {
  const { found, tenantExample } = await withStore(io, async (store) => {
    let record: ResourceRecord | undefined = await store.getResource(kind, id);
    if (!record) {
      const matches = await store.searchResources({ kind, find: id, limit: MATCHES_NAMED + 1 });
      if (matches.length > 1) {
        const named = matches.slice(0, MATCHES_NAMED).map((match) => match.id);
        const more = matches.length > MATCHES_NAMED ? ' and more' : '';
        throw new UsageError(`${id} matches several ${kind}s (${named.join(', ')}${more}): show one by its id.`);
      }
      // Read as by id, so `--json` prints the same record however it was found.
      record = matches[0] && (await store.getResource(kind, matches[0].id));
    }
    if (record) return { found: { record, runs: await resourceRuns(store, kind, record.id) } };
    // A partner platform keeps each order under its tenant: the bare order id a tenant quotes is none of them.
    const [tenant] = kind === 'payment' && !id.includes('/') ? await store.listTenantMerchants({ limit: 1 }) : [];
    return { found: undefined, tenantExample: tenant && `${tenant.tenantId}/${id}` };
  });
  if (!found) {
    const orders = tenantExample ? `; a tenant's order is <tenant>/<order>, e.g. ${printable(tenantExample)}` : '';
    throw notInStore(kind, id, `\`checkout-kit ${kind}s list\` (show also takes an order id, e-mail or event id${orders})`);
  }
  output(io, options.json ?? false, found, ({ record, runs }) =>
    [
      `${kind} ${printable(record.id)}${record.orderId ? ` (order ${printable(record.orderId)})` : ''}`,
      `outcome: ${record.outcome}${record.outcomeSource ? ` (learned by ${record.outcomeSource})` : ''}, ${record.open ? 'open' : 'closed'}`,
      `last news: ${record.lastNewsAt}`,
      table(
        runs.map((r) => ({ handler: r.key, status: r.status, attempts: r.attempts, completed: r.completedAt, error: r.lastError })),
        ['handler', 'status', 'attempts', 'completed', 'error'],
      ),
    ].join('\n'),
  );
}

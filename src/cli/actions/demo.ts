import { runDemo, type DemoResult } from '../../demo/index.js';
import { EXIT } from '../exit.js';
import { wholeNumber } from '../flags.js';
import { output, table, type CliIO } from '../io.js';

export interface DemoFlags {
  orders: string;
  drop: number;
  duplicate: number;
  reorder: boolean;
  data?: string;
  json?: boolean;
}

function human(result: DemoResult): string {
  const rows = result.rows.map((row) => ({
    order: row.orderId,
    scenario: row.scenario,
    amount: row.amount,
    outcome: row.outcome,
    'news by': row.learnedBy ?? '-',
    'handler calls':
      Object.entries(row.calls)
        .map(([outcome, n]) => `${outcome} ×${n}${row.late && (outcome === 'paid' || outcome === 'overpaid') ? ' (late)' : ''}`)
        .join(', ') || '-',
    check: row.ok ? 'ok' : `MISMATCH (expected ${row.expected})`,
  }));
  const { webhooks, reconcile } = result;
  return [
    table(rows, ['order', 'scenario', 'amount', 'outcome', 'news by', 'handler calls', 'check']),
    '',
    `webhooks: ${webhooks.emitted} events, ${webhooks.dropped} dropped, ${webhooks.duplicated} duplicated, ${webhooks.attempts} delivery records`,
    `reconcile: checked ${reconcile.checked}, fulfilled ${reconcile.fulfilled}, missed by webhooks ${reconcile.missedByWebhooks}`,
    result.ok
      ? `all ${result.rows.length} orders reached their outcome with exactly one handler call per outcome (${result.seconds.toFixed(1)} s)`
      : `FAILED: some orders did not reach their expected outcome or a handler ran more than once`,
  ].join('\n');
}

/** `checkout-kit demo`: the whole story on embedded defaults. */
export async function demo(options: DemoFlags, io: CliIO, setExit: (code: number) => void): Promise<void> {
  const orders = wholeNumber('--orders', { min: 1, max: 1000 })(options.orders);
  const result = await runDemo({
    orders,
    faults: { drop: options.drop, duplicate: options.duplicate, reorder: options.reorder },
    dataDir: options.data,
    onLine: options.json ? undefined : (line) => io.stderr.write(`demo: ${line}\n`),
  });
  output(io, options.json ?? false, result, human);
  if (!result.ok) setExit(EXIT.failures);
}

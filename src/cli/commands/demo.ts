import { runDemo, type DemoResult } from '../../demo/index.js';
import { EXIT } from '../exit.js';
import { probability, wholeNumber } from '../flags.js';
import { output, table } from '../io.js';
import type { Register } from '../register.js';

function human(result: DemoResult): string {
  const rows = result.rows.map((row) => ({
    order: row.orderId,
    scenario: row.scenario,
    amount: row.amount,
    outcome: row.outcome,
    'news by': row.learnedBy ?? '-',
    'handler calls': Object.entries(row.calls).map(([outcome, n]) => `${outcome} ×${n}${row.late && (outcome === 'paid' || outcome === 'overpaid') ? ' (late)' : ''}`).join(', ') || '-',
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

export const registerDemo: Register = (program, io, setExit) => {
  program
    .command('demo')
    .description('the whole story on embedded defaults: sandbox with faulty webhooks, receiver, checkout, payments, reconcile')
    .option('--orders <n>', 'orders to create (cycling through the scenarios)', '12')
    .option('--drop <p>', 'probability a webhook is never delivered', probability('--drop'), 0.3)
    .option('--duplicate <p>', 'probability a webhook is delivered twice', probability('--duplicate'), 0.3)
    .option('--no-reorder', 'deliver webhooks in order')
    .option('--data <dir>', 'keep the data in this folder (default: a temp folder, removed)')
    .option('--json', 'JSON output')
    .action(async (options: { orders: string; drop: number; duplicate: number; reorder: boolean; data?: string; json?: boolean }) => {
      const orders = wholeNumber('--orders', { min: 1, max: 1000 })(options.orders);
      const result = await runDemo({
        orders,
        faults: { drop: options.drop, duplicate: options.duplicate, reorder: options.reorder },
        dataDir: options.data,
        onLine: options.json ? undefined : (line) => io.stderr.write(`demo: ${line}\n`),
      });
      output(io, options.json ?? false, result, human);
      if (!result.ok) setExit(EXIT.failures);
    });
};

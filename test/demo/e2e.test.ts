import { describe, expect, it } from 'vitest';
import { runDemo } from '../../src/demo/index.js';
import { runCli } from '../support/cli.js';

describe('end to end: sandbox with faulty webhooks + receiver + reconcile', () => {
  it('50 payments in mixed scenarios: every paid one fulfilled exactly once, every expired one reported once', async () => {
    const result = await runDemo({ orders: 50, faults: { drop: 0.3, duplicate: 0.3, reorder: true, seed: 20261122 } });
    // The faults really happened. Whether reconcile finds a payment the webhooks missed depends on
    // timing (a later event's read may already see the final state), so the next test pins that.
    expect(result.webhooks.dropped).toBeGreaterThan(0);
    expect(result.webhooks.duplicated).toBeGreaterThan(0);
    expect(result.rows).toHaveLength(50);
    for (const row of result.rows) {
      expect(row, `${row.orderId} (${row.scenario})`).toMatchObject({ ok: true, outcome: row.expected });
    }
    const paidCalls = result.rows.filter((row) => row.outcome === 'paid').map((row) => row.calls.paid);
    expect(paidCalls.every((n) => n === 1)).toBe(true);
    const expiredRows = result.rows.filter((row) => row.scenario === 'expired');
    expect(expiredRows.map((row) => row.calls)).toEqual(expiredRows.map(() => ({ expired: 1 })));
    expect(result.reconcile.failed).toBe(0);
  });

  it('with every webhook dropped, reconcile alone brings every order to its outcome, once', async () => {
    const result = await runDemo({ orders: 12, faults: { drop: 1, duplicate: 0, reorder: false, seed: 1 } });
    expect(result.webhooks.dropped).toBe(result.webhooks.attempts);
    expect(result.rows).toHaveLength(12);
    for (const row of result.rows) {
      expect(row, `${row.orderId} (${row.scenario})`).toMatchObject({ ok: true, outcome: row.expected, learnedBy: 'reconcile' });
    }
    // Every order reached an outcome, and no webhook brought any of them.
    expect(result.reconcile.missedByWebhooks).toBe(12);
    expect(result.reconcile.failed).toBe(0);
  });

  it('`checkout-kit demo --json` reports one handler call per paid order', async () => {
    const { code, stdout } = await runCli(['demo', '--json', '--orders', '6'], { cwd: process.cwd() });
    expect(code).toBe(0);
    const result = JSON.parse(stdout) as { ok: boolean; rows: Array<{ outcome: string; calls: Record<string, number> }> };
    expect(result.ok).toBe(true);
    for (const row of result.rows.filter((r) => r.outcome === 'paid')) expect(row.calls.paid).toBe(1);
  });
});

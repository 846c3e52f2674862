import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { CheckReport } from '../../src/check/index.js';
import { execCli } from '../support/cli.js';
import { freePort } from '../support/ports.js';
import { removeTempDirs, tempDir } from '../support/temp-dirs.js';
import { reportOf, scenario, tsxCommand } from './helpers.js';

afterEach(removeTempDirs);

const fixture = (name: string) => fileURLToPath(new URL(`fixtures/${name}`, import.meta.url));

/** `check --start` against one broken backend; short waits, since its handlers will not all come. */
async function checkBroken(backend: string, json = true): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const cwd = await tempDir('ck-check-broken-');
  const port = await freePort();
  const args = [
    'check',
    '--against',
    `http://127.0.0.1:${port}/webhooks/checkout`,
    '--start',
    tsxCommand(fixture(backend)),
    '--no-reconcile',
    '--timeout',
    '3s',
    '--settle',
    '500ms',
  ];
  return execCli(json ? [...args, '--json'] : args, { cwd, env: { LOG_LEVEL: 'error' } });
}

const failing = (report: CheckReport) => report.scenarios.filter((s) => !s.ok).map((s) => s.scenario);

describe('checkout-kit check fails a broken backend, naming the scenario and the cause', () => {
  it('(a) the webhook route mounted behind express.json(): every genuine delivery refused with raw_body_required', async () => {
    const result = await checkBroken('express-json-backend.ts');
    const [code, report] = [result.code, reportOf(result)];
    expect(code).toBe(1);
    expect(report.ok).toBe(false);
    const paid = scenario(report, 'paid');
    expect(paid.ok).toBe(false);
    expect(paid.causes[0]).toMatch(
      /^refused 2 genuine deliveries \(payment\.created, payment\.paid\) that it must acknowledge: answered 500: raw_body_required — .*express\.json\(\)/,
    );
    expect(paid.causes).toContain('paid never ran: its deliveries were refused (see above)');
    // Every scenario that sends a webhook fails on it; the stale copies are refused as they must be.
    for (const s of report.scenarios.filter((s) => s.deliveries.length > 0)) expect(s.causes.join('\n'), s.scenario).toMatch(/raw_body_required/);
    expect(scenario(report, 'stale-timestamp').causes.join('\n')).not.toMatch(/accepted \(\d+\) a .* signed 3600 s ago/);
  });

  it('(b) fulfils on the event name payment.paid without confirming the amounts: mislabelled-paid fails, and says so', async () => {
    const result = await checkBroken('event-name-backend.ts');
    const [code, report] = [result.code, reportOf(result)];
    expect(code).toBe(1);
    const mislabelled = scenario(report, 'mislabelled-paid');
    expect(mislabelled.calls.paid).toBe(1);
    expect(mislabelled.causes).toEqual([
      expect.stringMatching(
        /^paid ran, but this payment's outcome is pending \(no handler yet\): the payment received 24\.00 of 25\.00 .*without confirming the amounts/,
      ),
    ]);
    // What it gets right still passes: the receiver dedupes, and the event names agree with the amounts there.
    for (const name of ['paid', 'partial-then-paid', 'overpaid', 'duplicates', 'reordering', 'stale-timestamp'] as const)
      expect(scenario(report, name).causes, name).toEqual([]);
    // No checkout route and no reconcile: the lost webhook is never caught, with the reason.
    expect(scenario(report, 'dropped-webhook').causes.join('\n')).toMatch(/never recorded this payment \(POST .*\/checkout answered 4\d\d/);
    expect(failing(report)).toEqual(['dropped-webhook', 'mislabelled-paid']);
  });

  it('(c) fulfils on every delivery without dedupe: duplicates fails with the handler count and the fix (human output)', async () => {
    const { code, stdout } = await checkBroken('no-dedupe-backend.ts', false);
    expect(code).toBe(1);
    expect(stdout).toMatch(/^duplicates +paid ×1 +paid ×3 +6 sent, 6 accepted +FAIL$/m);
    expect(stdout).toMatch(
      /^duplicates: pay in full; every event delivered three times \(webhooks: each event three times, two of them at once\)\n {2}- paid ran 3 times \(expected once\): the same event delivered again ran it again: dedupe deliveries by event id/m,
    );
    // It verifies signatures, so the stale copies are refused and the fresh ones run it once.
    expect(stdout).toMatch(/^stale-timestamp +paid ×1 +paid ×1 +4 sent, 2 accepted, 2 refused +ok$/m);
    expect(stdout).toMatch(/^paid +paid ×1 +paid ×1 +2 sent, 2 accepted +ok$/m);
    expect(stdout).toMatch(/^3 of 11 scenarios failed: duplicates, dropped-webhook, mislabelled-paid$/m);
  });
});

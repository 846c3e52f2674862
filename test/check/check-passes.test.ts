import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CHECK_SCENARIO_NAMES } from '../../src/check/index.js';
import { startSandbox } from '../../src/sandbox/index.js';
import { execCli, spawnCli, stopProcess, waitForLine } from '../support/cli.js';
import { freePort } from '../support/ports.js';
import { removeTempDirs, tempDir } from '../support/temp-dirs.js';
import { reportOf, scaffoldShop, scenario, tsxCommand } from './helpers.js';

const children: Array<ReturnType<typeof spawnCli>> = [];
afterEach(async () => {
  for (const child of children.splice(0)) await stopProcess(child);
  await removeTempDirs();
});

describe('checkout-kit check passes a correct backend', () => {
  it('the scaffold from `init`, its own server started by --start: every scenario holds, exit 0', async () => {
    const shop = join(await tempDir('ck-check-shop-'), 'shop');
    await scaffoldShop(shop);
    const port = await freePort();
    const result = await execCli(['check', '--against', `http://127.0.0.1:${port}/webhooks/checkout`, '--start', tsxCommand('src/server.ts'), '--json'], {
      cwd: shop,
      env: { LOG_LEVEL: 'warn' },
    });
    const report = reportOf(result);
    expect(report.scenarios.filter((s) => !s.ok).map((s) => `${s.scenario}: ${s.causes.join(' | ')}`)).toEqual([]);
    expect(result.code).toBe(0);
    expect(report.ok).toBe(true);
    expect(report.scenarios.map((s) => s.scenario)).toEqual(CHECK_SCENARIO_NAMES);
    expect(report.evidence).toMatch(/^handler-call record /);
    expect(report.reconcile).toMatchObject({ ok: true });
    // Orders went through the scaffold's own POST /checkout.
    expect(new Set(report.scenarios.map((s) => s.createdVia))).toEqual(new Set(['backend']));
    expect(scenario(report, 'duplicates')).toMatchObject({ calls: { paid: 1, overpaid: 0, underpaid: 0, expired: 0 } });
    expect(scenario(report, 'duplicates').deliveries.length).toBeGreaterThanOrEqual(6);
    expect(scenario(report, 'overpaid').calls).toMatchObject({ overpaid: 1, paid: 0 });
    expect(scenario(report, 'underpaid').calls).toMatchObject({ underpaid: 1, paid: 0 });
    expect(scenario(report, 'dropped-webhook')).toMatchObject({ deliveries: [], calls: { paid: 1 } });
    expect(scenario(report, 'mislabelled-paid').calls).toEqual({ paid: 0, overpaid: 0, underpaid: 0, expired: 0 });
    const stale = scenario(report, 'stale-timestamp').deliveries;
    expect(stale.filter((d) => d.expected === 'refuse').map((d) => [d.status, d.accepted])).toEqual(
      stale.filter((d) => d.expected === 'refuse').map(() => [401, false]),
    );
    expect(stale.filter((d) => d.expected === 'accept').every((d) => d.accepted)).toBe(true);
  });

  it('`serve` already running with the scaffold’s fulfillment module, read through its store: exit 0, and a human table', async () => {
    const root = await tempDir('ck-check-serve-');
    const shop = join(root, 'shop');
    await scaffoldShop(shop);
    // The merchant's setup: a sandbox run once (credentials.json), the backend configured from it.
    const sandboxPort = await freePort();
    const data = join(root, 'sandbox');
    const seeded = await startSandbox({ dataDir: data, port: sandboxPort });
    const { credentials } = seeded;
    await seeded.close();
    const env = {
      CHECKOUT_BASE_URL: `http://127.0.0.1:${sandboxPort}`,
      CHECKOUT_API_KEY: credentials.test.merchant.apiKey,
      CHECKOUT_SIGNING_SECRET: credentials.test.merchant.signingSecret,
      CHECKOUT_WEBHOOK_SECRET: credentials.webhookSecret,
      CHECKOUT_STORE: `file:${join(root, 'store')}`,
      LOG_LEVEL: 'warn',
    };
    const port = await freePort();
    const serve = spawnCli(['serve', '--port', String(port), '--handlers', 'fulfillment.ts'], { cwd: shop, env });
    children.push(serve);
    await waitForLine(serve, /listening on/);

    const result = await execCli(['check', '--against', `http://127.0.0.1:${port}/webhooks/checkout`, '--data', data], { cwd: shop, env });
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
    expect(result.stdout).toMatch(/^evidence: store file:.*completed handler runs/m);
    expect(result.stdout).toMatch(/^duplicates +paid ×1 +paid ×1 +6 sent, 6 accepted +ok$/m);
    expect(result.stdout).toMatch(/^stale-timestamp +paid ×1 +paid ×1 +4 sent, 2 accepted, 2 refused +ok$/m);
    expect(result.stdout).toMatch(/all 11 scenarios held/);
  });
});

import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PARTNER_SCENARIO_NAMES } from '../../src/check/index.js';
import { execCli } from '../support/cli.js';
import { freePort } from '../support/ports.js';
import { removeTempDirs, tempDir } from '../support/temp-dirs.js';
import { reportOf, scaffoldShop, scenario, tsxCommand } from './helpers.js';

afterEach(removeTempDirs);

describe('checkout-kit check --partner', () => {
  it('the platform from `init --partner`, started by --start: two tenants, the same order id, a forged cross-tenant delivery and a missed webhook all hold', async () => {
    const platform = join(await tempDir('ck-check-partner-'), 'platform');
    await scaffoldShop(platform, { partner: true });
    const port = await freePort();
    const result = await execCli(
      ['check', '--partner', '--against', `http://127.0.0.1:${port}/webhooks/checkout`, '--start', tsxCommand('src/server.ts'), '--json'],
      { cwd: platform, env: { LOG_LEVEL: 'warn' } },
    );
    const report = reportOf(result);
    expect(report.scenarios.filter((s) => !s.ok).map((s) => `${s.scenario}: ${s.causes.join(' | ')}`)).toEqual([]);
    expect(result.code).toBe(0);
    expect(report.scenarios.map((s) => s.scenario)).toEqual(PARTNER_SCENARIO_NAMES);
    expect(new Set(report.scenarios.map((s) => s.createdVia))).toEqual(new Set(['backend']));
    // Two tenants' orders with one id are two payments, each paid once.
    const a = scenario(report, 'tenant-a-order');
    const b = scenario(report, 'tenant-b-same-order');
    expect(a.orderId).toBe(b.orderId);
    expect(a.tenantId).not.toBe(b.tenantId);
    expect(a.paymentId).not.toBe(b.paymentId);
    expect([a.calls.paid, b.calls.paid]).toEqual([1, 1]);
    // The forged delivery was accepted (it is signed) and moved nothing.
    const forged = scenario(report, 'forged-cross-tenant');
    expect(forged.deliveries.some((d) => d.eventId.endsWith('_forged') && d.accepted)).toBe(true);
    expect(forged.calls).toEqual({ paid: 0, overpaid: 0, underpaid: 0, expired: 0 });
    expect(scenario(report, 'tenant-missed-webhook')).toMatchObject({ deliveries: [], calls: { paid: 1 } });
  });

  it('refuses partner scenarios without --partner, and merchant ones with it, with exit 2', async () => {
    const dir = await tempDir('ck-check-partner-usage-');
    const against = 'http://127.0.0.1:9/webhooks/checkout';
    const withoutFlag = await execCli(['check', '--against', against, '--only', 'forged-cross-tenant'], { cwd: dir });
    expect(withoutFlag.code).toBe(2);
    expect(withoutFlag.stderr).toContain('with --partner: tenant-a-order');
    const merchantOne = await execCli(['check', '--partner', '--against', against, '--only', 'duplicates'], { cwd: dir });
    expect(merchantOne.code).toBe(2);
  });
});

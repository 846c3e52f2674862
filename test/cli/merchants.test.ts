import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { SandboxHandle } from '../../src/sandbox/index.js';
import { cleanup, openSandbox, readState, tempDir } from '../sandbox/helpers.js';
import { openStore } from '../../src/store/open.js';
import { execCli } from '../support/cli.js';

afterEach(cleanup);

/** A partner platform's environment: the sandbox's test partner keys alone, and a store file. */
const partnerEnv = (sandbox: SandboxHandle) => ({
  CHECKOUT_BASE_URL: sandbox.url,
  CHECKOUT_PARTNER_API_KEY: sandbox.credentials.test.partner.apiKey,
  CHECKOUT_PARTNER_SIGNING_SECRET: sandbox.credentials.test.partner.signingSecret,
  CHECKOUT_STORE: 'file:./store',
  LOG_LEVEL: 'warn',
});

const merchantsOf = async (sandbox: SandboxHandle, tenantId: string) =>
  (await readState(sandbox)).merchants.filter((m) => (m as { externalTenantId?: string }).externalTenantId === tenantId);

describe('checkout-kit merchants, as separate processes on one store file', () => {
  it('onboard run four times at once for a tenant makes one merchant; list and show read it from another process', async () => {
    const sandbox = await openSandbox();
    const cwd = await tempDir('ck-merchants-');
    const env = partnerEnv(sandbox);
    const runs = await Promise.all(
      Array.from({ length: 4 }, () =>
        execCli(['merchants', 'onboard', '--tenant', 'tenant-a', '--name', 'Shop A', '--email', 'a@example.com', '--json'], { cwd, env }),
      ),
    );
    for (const run of runs) expect(run, run.stderr).toMatchObject({ code: 0 });
    const records = runs.map((run) => JSON.parse(run.stdout) as { tenantId: string; merchantId: string; status: string });
    expect(new Set(records.map((r) => r.merchantId)).size).toBe(1);
    expect(records[0]).toMatchObject({ tenantId: 'tenant-a', status: 'created' });
    expect(await merchantsOf(sandbox, 'tenant-a')).toHaveLength(1);

    const again = await execCli(['merchants', 'onboard', '--tenant', 'tenant-a', '--name', 'Shop A', '--email', 'a@example.com'], { cwd, env });
    expect(again).toMatchObject({ code: 0, stdout: `tenant tenant-a was already onboarded: merchant ${records[0]!.merchantId} (test)\n` });

    const list = await execCli(['merchants', 'list', '--json'], { cwd, env });
    expect(JSON.parse(list.stdout)).toMatchObject([{ tenantId: 'tenant-a', environment: 'test', merchantId: records[0]!.merchantId }]);
    for (const id of ['tenant-a', records[0]!.merchantId]) {
      const show = await execCli(['merchants', 'show', id], { cwd, env });
      expect(show.code).toBe(0);
      expect(show.stdout).toContain(records[0]!.merchantId);
    }
  });

  it('list is in the order tenants were onboarded, and a list cut at --limit says more are stored', async () => {
    const cwd = await tempDir('ck-merchants-');
    const store = await openStore('file:./store', { cwd });
    for (const n of [1, 2, 3]) {
      await store.putTenantMerchant({
        tenantId: `tenant-${n}`,
        environment: 'test',
        idempotencyKey: `k${n}`,
        requestHash: `h${n}`,
        name: `Shop ${n}`,
        email: `o${n}@example.com`,
      });
    }
    await store.close();
    const env = { CHECKOUT_STORE: 'file:./store' };
    const cut = await execCli(['merchants', 'list', '--limit', '2'], { cwd, env });
    expect(cut.code).toBe(0);
    const lines = cut.stdout.trimEnd().split('\n');
    expect(lines.slice(2, 4).map((line) => line.split(/\s+/)[0])).toEqual(['tenant-1', 'tenant-2']);
    expect(lines.slice(4)).toEqual(['(the first 2; more are stored: raise --limit to see them)']);
    expect((await execCli(['merchants', 'list', '--limit', '3'], { cwd, env })).stdout).not.toContain('more are stored');
    expect(JSON.parse((await execCli(['merchants', 'list', '--limit', '2', '--json'], { cwd, env })).stdout)).toHaveLength(2);
  });

  it('refuses in one line, exit 2, with nothing stored or created: no partner keys, bad input, other details, an unknown tenant', async () => {
    const sandbox = await openSandbox();
    const cwd = await tempDir('ck-merchants-');
    const env = partnerEnv(sandbox);
    const noKeys = await execCli(['merchants', 'onboard', '--tenant', 't', '--name', 'N', '--email', 'n@example.com'], {
      cwd,
      env: { ...env, CHECKOUT_PARTNER_API_KEY: '' },
    });
    expect(noKeys).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/^checkout-kit: CHECKOUT_PARTNER_API_KEY and CHECKOUT_PARTNER_SIGNING_SECRET must both be set[^\n]*\n$/),
    });
    expect(existsSync(join(cwd, 'store'))).toBe(false);

    const bad = await execCli(['merchants', 'onboard', '--tenant', 't', '--name', 'N', '--email', 'not-an-address'], { cwd, env });
    expect(bad).toMatchObject({ code: 2, stderr: expect.stringMatching(/^checkout-kit: onboarding: invalid input \(email: [^\n]*\); nothing was sent\.\n$/) });

    expect((await execCli(['merchants', 'onboard', '--tenant', 't', '--name', 'N', '--email', 'n@example.com'], { cwd, env })).code).toBe(0);
    const other = await execCli(['merchants', 'onboard', '--tenant', 't', '--name', 'Renamed', '--email', 'n@example.com'], { cwd, env });
    expect(other).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(
        /^checkout-kit: Tenant t is already onboarded \(merchant [0-9a-f-]+\) with another name or e-mail \(N, n@example.com\)[^\n]*\n$/,
      ),
    });
    expect(await merchantsOf(sandbox, 't')).toHaveLength(1);

    const unknown = await execCli(['merchants', 'show', 'nobody'], { cwd, env });
    expect(unknown).toMatchObject({ code: 2, stderr: 'checkout-kit: No tenant or merchant nobody in the store: see `checkout-kit merchants list`.\n' });
  });

  it("credentials stores a tenant's own keys from standard input, sealed; show says which keys read its payments; rekey and --clear work from other processes", async () => {
    const sandbox = await openSandbox();
    const cwd = await tempDir('ck-merchants-');
    const env = { ...partnerEnv(sandbox), CHECKOUT_SECRETS_KEY: randomBytes(32).toString('base64') };
    const onboarded = await execCli(['merchants', 'onboard', '--tenant', 'tenant-a', '--name', 'Shop A', '--email', 'a@example.com', '--json'], { cwd, env });
    const { merchantId } = JSON.parse(onboarded.stdout) as { merchantId: string };
    const keys = (await (await fetch(`${sandbox.url}/sandbox/merchants/${merchantId}/keys`, { method: 'POST' })).json()) as Record<string, string>;
    const input = JSON.stringify({ apiKey: keys.apiKey, signingSecret: keys.signingSecret });

    const stored = await execCli(['merchants', 'credentials', '--tenant', 'tenant-a'], { cwd, env, input });
    expect(stored, stored.stderr).toMatchObject({
      code: 0,
      stdout: expect.stringMatching(/^tenant tenant-a \(test\): credentials stored, sealed with key [0-9a-f]{8}\n$/),
    });
    const show = await execCli(['merchants', 'show', 'tenant-a'], { cwd, env });
    expect(show.stdout).toMatch(/own credentials \(sealed, key [0-9a-f]{8}\)/);
    for (const secret of [keys.apiKey!, keys.signingSecret!, env.CHECKOUT_SECRETS_KEY]) expect(show.stdout + stored.stdout + show.stderr).not.toContain(secret);

    const rekeyed = await execCli(['merchants', 'rekey'], {
      cwd,
      env: { ...env, CHECKOUT_SECRETS_KEY: `${randomBytes(32).toString('hex')},${env.CHECKOUT_SECRETS_KEY}` },
    });
    expect(rekeyed).toMatchObject({ code: 0, stdout: expect.stringMatching(/^re-sealed 1 tenants' credentials with key [0-9a-f]{8} \(0 already were\)\n$/) });
    // The old key alone no longer opens them: rekey says which key is missing.
    const stale = await execCli(['merchants', 'rekey'], { cwd, env });
    expect(stale).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(
        /^checkout-kit: the stored credentials of tenant tenant-a \(test\) were sealed with key [0-9a-f]{8}, which CHECKOUT_SECRETS_KEY does not hold[^\n]*\n$/,
      ),
    });

    const cleared = await execCli(['merchants', 'credentials', '--tenant', 'tenant-a', '--clear'], { cwd, env });
    expect(cleared.stdout).toMatch(/credentials forgotten/);
    expect((await execCli(['merchants', 'show', 'tenant-a'], { cwd, env })).stdout).toMatch(/partner's keys/);
  });

  it('credentials refuses in one line, exit 2, storing nothing: no CHECKOUT_SECRETS_KEY, input that is not JSON, a tenant not onboarded', async () => {
    const sandbox = await openSandbox();
    const cwd = await tempDir('ck-merchants-');
    const env = { ...partnerEnv(sandbox), CHECKOUT_SECRETS_KEY: randomBytes(32).toString('base64') };
    const { apiKey, signingSecret } = sandbox.credentials.test.merchant;
    const input = JSON.stringify({ apiKey, signingSecret });
    await execCli(['merchants', 'onboard', '--tenant', 'other', '--name', 'Other', '--email', 'o@example.com'], { cwd, env });
    const noKey = await execCli(['merchants', 'credentials', '--tenant', 't'], { cwd, env: { ...env, CHECKOUT_SECRETS_KEY: '' }, input });
    expect(noKey).toMatchObject({ code: 2, stderr: expect.stringMatching(/^checkout-kit: CHECKOUT_SECRETS_KEY is not set[^\n]*\n$/) });
    const notJson = await execCli(['merchants', 'credentials', '--tenant', 't'], { cwd, env, input: 'svc_mk_test_x' });
    expect(notJson).toMatchObject({ code: 2, stderr: expect.stringMatching(/^checkout-kit: standard input is not JSON[^\n]*\n$/) });
    const unknown = await execCli(['merchants', 'credentials', '--tenant', 't'], { cwd, env, input });
    expect(unknown).toMatchObject({ code: 2, stderr: expect.stringMatching(/^checkout-kit: Tenant t is not onboarded in the test environment[^\n]*\n$/) });
    expect(JSON.parse((await execCli(['merchants', 'show', 'other', '--json'], { cwd, env })).stdout)).toMatchObject([{ credentials: null }]);
  });

  it('a tenant id with spaces around it names the onboarded tenant in credentials; a merchant id in capitals is found by show; a tenant id with "/" is refused, exit 2', async () => {
    const sandbox = await openSandbox();
    const cwd = await tempDir('ck-merchants-');
    const env = { ...partnerEnv(sandbox), CHECKOUT_SECRETS_KEY: randomBytes(32).toString('base64') };
    const onboarded = await execCli(['merchants', 'onboard', '--tenant', ' shop-s ', '--name', 'Spaced', '--email', 's@example.com'], { cwd, env });
    expect(onboarded.stdout).toMatch(/^tenant shop-s onboarded: merchant ([0-9a-f-]{36}) \(test\)\n$/);
    const merchantId = /merchant ([0-9a-f-]{36})/.exec(onboarded.stdout)![1]!;
    const { apiKey, signingSecret } = sandbox.credentials.test.merchant;
    const stored = await execCli(['merchants', 'credentials', '--tenant', ' shop-s '], { cwd, env, input: JSON.stringify({ apiKey, signingSecret }) });
    expect(stored).toMatchObject({ code: 0, stdout: expect.stringMatching(/^tenant shop-s \(test\): credentials stored/) });
    const shown = await execCli(['merchants', 'show', merchantId.toUpperCase(), '--json'], { cwd, env });
    expect(JSON.parse(shown.stdout)).toMatchObject([{ tenantId: 'shop-s', merchantId, credentials: { keyId: expect.any(String) } }]);
    const slash = await execCli(['merchants', 'credentials', '--tenant', 'a/b'], { cwd, env, input: '{}' });
    expect(slash).toMatchObject({ code: 2, stderr: expect.stringMatching(/^checkout-kit: --tenant must be 1 to 200 characters without "\/"[^\n]*\n$/) });
  });
});

/**
 * A partner platform from `init --partner`, as real processes: the sandbox writes the partner's
 * keys into .env (`--write-env --partner`), the scaffold's server onboards two tenants (one of them
 * twice at once), each tenant's order 1001 is paid at the sandbox, and each is fulfilled once as
 * that tenant's order. The test types no credential.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { simulateStep } from '../../src/devtools/sandbox-api.js';
import { execCli, spawnCli, stopProcess, TSX_LOADER, waitForLine } from '../support/cli.js';
import { eventually, freePort } from '../support/ports.js';
import { createdPaymentId, postCheckout } from '../support/post-checkout.js';
import { linkKit } from '../support/scaffold.js';
import { removeTempDirs, tempDir } from '../support/temp-dirs.js';

const children: ChildProcess[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) await stopProcess(child);
  await removeTempDirs();
});

function started(child: ChildProcess): { child: ChildProcess; output: () => string } {
  children.push(child);
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return { child, output: () => output };
}

/** The platform's JSON log lines saying an order was paid (the partner fulfillment's `paid` handler). */
const paidLines = (log: string) =>
  log
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { msg?: string; orderId?: string; tenantId?: string })
    .filter((line) => line.msg === 'order paid');

describe('a partner platform from init --partner', () => {
  it("onboards each tenant once and fulfils each tenant's order 1001 once, as that tenant's", async () => {
    const root = await tempDir('ck-partner-tutorial-');
    const platform = join(root, 'platform');
    const initialised = await execCli(['init', 'platform', '--partner'], { cwd: root });
    expect(initialised.code, initialised.stderr).toBe(0);
    const tsconfig = await linkKit(platform);

    const port = await freePort();
    const sandbox = started(
      spawnCli(['sandbox', '--port', '0', '--webhook-url', `http://127.0.0.1:${port}/webhooks/checkout`, '--write-env', '--partner'], { cwd: platform }),
    );
    await waitForLine(sandbox.child, /^env: created .*\.env /m);
    const env = await readFile(join(platform, '.env'), 'utf8');
    expect(env).toMatch(/^CHECKOUT_PARTNER_API_KEY=svc_pk_test_/m);
    expect(env).toMatch(/^CHECKOUT_API_KEY=$/m);

    const server = started(
      spawn(process.execPath, ['--import', TSX_LOADER, 'src/server.ts'], {
        cwd: platform,
        env: { PATH: process.env.PATH, TSX_TSCONFIG_PATH: tsconfig, PORT: String(port) },
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    const origin = `http://127.0.0.1:${port}`;
    const failure = () => `\nplatform:\n${server.output()}\nsandbox:\n${sandbox.output()}`;
    await eventually(async () => ((await fetch(`${origin}/webhooks/checkout`).catch(() => undefined)) ? true : undefined), 60_000, 100).catch(
      (error: Error) => {
        throw new Error(`${error.message}: the platform did not answer${failure()}`);
      },
    );

    const onboard = (tenantId: string) =>
      fetch(`${origin}/tenants`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ tenantId, name: `Shop ${tenantId}`, email: `${tenantId}@example.com` }),
      });
    const [a1, a2] = await Promise.all([onboard('shop-a'), onboard('shop-a')]);
    const b = await onboard('shop-b');
    for (const answer of [a1, a2, b]) expect([200, 201], failure()).toContain(answer.status);
    const merchantA = ((await a1.json()) as { merchantId: string }).merchantId;
    expect(((await a2.json()) as { merchantId: string }).merchantId).toBe(merchantA);
    expect((await onboard('shop-a')).status).toBe(200);
    expect((await onboard('shop/a')).status).toBe(400);
    // One merchant per tenant at the service, however the onboarding was asked.
    const atService = JSON.parse(await readFile(join(platform, '.sandbox', 'sandbox.json'), 'utf8')) as {
      merchants: Array<{ externalTenantId: string | null }>;
    };
    expect(
      atService.merchants
        .map((merchant) => merchant.externalTenantId)
        .filter((id) => id?.startsWith('shop-'))
        .sort(),
    ).toEqual(['shop-a', 'shop-b']);

    // Each tenant's order 1001, paid in full at the sandbox.
    const payments: string[] = [];
    for (const tenantId of ['shop-a', 'shop-b']) {
      const created = await postCheckout(origin, { orderId: '1001', amount: '25.00', tenantId });
      expect(created.status, await created.clone().text()).toBe(303);
      const paymentId = createdPaymentId(created);
      payments.push(paymentId);
      const paid = await simulateStep(
        new URL(created.headers.get('location')!).origin,
        { kind: 'payment', id: paymentId },
        { action: 'deposit', amount: '25.00' },
      );
      expect(paid.status).toBe('PAID');
    }
    expect(new Set(payments).size).toBe(2);
    expect((await postCheckout(origin, { orderId: '1001', amount: '25.00', tenantId: 'shop-z' })).status).toBe(404);

    await eventually(() => (paidLines(server.output()).length >= 2 ? true : undefined), 60_000).catch((error: Error) => {
      throw new Error(`${error.message}: the paid handlers did not run${failure()}`);
    });
    const returned = await fetch(`${origin}/checkout/return?orderId=shop-b/1001`, { headers: { accept: 'application/json' } });
    expect(await returned.json()).toMatchObject({ state: 'paid', confirmed: true });
    expect(
      paidLines(server.output())
        .map((line) => ({ tenantId: line.tenantId, orderId: line.orderId }))
        .sort((x, y) => x.orderId!.localeCompare(y.orderId!)),
      failure(),
    ).toEqual([
      { tenantId: 'shop-a', orderId: 'shop-a/1001' },
      { tenantId: 'shop-b', orderId: 'shop-b/1001' },
    ]);
    expect(sandbox.output(), 'no delivery refused').not.toContain('webhook refused');
  }, 240_000);
});

import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CheckoutClient } from '../../src/client/index.js';
import { openStore } from '../../src/store/open.js';
import { cleanup, openShop, simulate } from '../sandbox/helpers.js';
import { execCli, runCli, sandboxEnv } from '../support/cli.js';
import { TEST_KEYS } from '../support/fixtures.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ck-reconcile-cli-'));
  await writeFile(join(dir, 'fulfillment.mjs'), 'export default { async paid() {} };\n');
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
  await cleanup();
});

/** A handler run that failed for good, as `maxAttempts` throws leave it. */
async function seedFailedRun(key: string) {
  const store = await openStore('file:.checkout-kit', { cwd: dir });
  await store.enqueueRun({ key, kind: 'fulfillment', data: {} });
  await store.claimRun(key, { owner: 'me', leaseMs: 1000 });
  await store.failRun(key, 'me', { error: 'no stock' });
  await store.close();
}

// Nothing is open, so reconcile never calls the (unreachable) service.
const env = { CHECKOUT_BASE_URL: 'http://127.0.0.1:9', CHECKOUT_API_KEY: TEST_KEYS.apiKey, CHECKOUT_SIGNING_SECRET: TEST_KEYS.signingSecret };

describe('checkout-kit reconcile', () => {
  it('closes a payment the service does not know (404) and exits 0; the next pass does not ask again', async () => {
    const shop = await openShop('ck-reconcile-404-', 'export default { async paid() {} };\n');
    // A payment the sandbox knows (still waiting for money) beside one it does not.
    const { apiKey, signingSecret } = shop.sandbox.credentials.test.merchant;
    const client = new CheckoutClient({ baseUrl: shop.sandbox.url, apiKey, signingSecret });
    const known = await client.payments.create({ amount: '10.00', referenceId: 'order-404-test' });
    const store = await openStore('file:.checkout-kit', { cwd: shop.dir });
    await store.updateResource({ kind: 'payment', id: known.id, source: 'checkout' });
    await store.updateResource({ kind: 'payment', id: '5e1c3a4b-0000-4000-8000-0000000000bb', source: 'webhook' });
    await store.close();
    const first = await runCli(['reconcile', '--json', '--older-than', '0'], { cwd: shop.dir, env: sandboxEnv(shop.sandbox) });
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ checked: 1, failed: 0, unknownToService: 1, errors: [] });
    expect(first.stderr).toMatch(/the service does not know payment 5e1c3a4b-0000-4000-8000-0000000000bb \(404\): closed/);
    const second = await runCli(['reconcile', '--json', '--older-than', '0'], { cwd: shop.dir, env: sandboxEnv(shop.sandbox) });
    expect([second.code, JSON.parse(second.stdout)]).toMatchObject([0, { checked: 1, failed: 0, unknownToService: 0 }]);
  });

  it('refuses with exit 2 and one line, before opening the store, when the service is not configured', async () => {
    const result = await runCli(['reconcile'], { cwd: dir, env: { CHECKOUT_STORE: 'file:never-opened' } });
    expect(result).toMatchObject({
      code: 2,
      stderr:
        'checkout-kit: reconcile needs CHECKOUT_BASE_URL and CHECKOUT_API_KEY/CHECKOUT_SIGNING_SECRET (and CHECKOUT_INVOICE_KEY for invoices), or for a partner platform CHECKOUT_PARTNER_API_KEY/CHECKOUT_PARTNER_SIGNING_SECRET\n',
    });
    expect(existsSync(join(dir, 'never-opened'))).toBe(false);
  });

  it('the commands reconcile prints for failed runs work as printed', async () => {
    await seedFailedRun('payment:p-1:paid');
    const reconciled = await runCli(['reconcile', '--older-than', '0'], { cwd: dir, env });
    expect(reconciled.stderr).toBe('');
    expect(reconciled.code).toBe(1);
    const printed = [...reconciled.stdout.matchAll(/`checkout-kit ([^`]+)`/g)].map((match) => match[1]!);
    expect(printed).toHaveLength(2);

    // In the order printed: list the failed runs, then put them back in line.
    const results = [];
    for (const command of printed) results.push(await runCli(command.split(' '), { cwd: dir, env }));
    const [list, retry] = results;
    expect(list).toMatchObject({ code: 0, stderr: '' });
    expect(list!.stdout).toMatch(/payment:p-1:paid\s+failed\s+1/);
    expect(retry).toMatchObject({ code: 0, stdout: '1 run(s) put back in line\n' });

    // Once more: the run is pending now, and a key no run has is a mistake, not "0 runs".
    expect(await runCli(['retry', 'payment:p-1:paid'], { cwd: dir, env })).toMatchObject({
      code: 0,
      stdout: 'run payment:p-1:paid is pending, not failed: nothing to put back\n',
    });
    expect(await runCli(['retry', 'payment:p-1:payd'], { cwd: dir, env })).toMatchObject({
      code: 2,
      stdout: '',
      stderr: 'checkout-kit: No run payment:p-1:payd in the store: see `checkout-kit runs --failed` for the keys of failed runs.\n',
    });
  });

  it('retry with a run key and --all is refused, exit 2, putting nothing back, instead of retrying the one key alone', async () => {
    await seedFailedRun('payment:p-1:paid');
    await seedFailedRun('payment:p-2:paid');
    expect(await runCli(['retry', 'payment:p-1:paid', '--all'], { cwd: dir, env })).toMatchObject({
      code: 2,
      stdout: '',
      stderr: 'checkout-kit: give a run key or --all, not both: payment:p-1:paid alone, or every failed run?\n',
    });
    const store = await openStore('file:.checkout-kit', { cwd: dir });
    try {
      expect((await store.getRun('payment:p-1:paid'))?.status).toBe('failed');
      expect((await store.getRun('payment:p-2:paid'))?.status).toBe('failed');
    } finally {
      await store.close();
    }
  });

  it('a handler whose promise never settles fails its run for good, left for retry (it may still act): the pass finishes, exits 1 naming it and frees its lock', async () => {
    const shop = await openShop('ck-reconcile-never-settles-', 'export default { paid() { return new Promise(() => {}); } };\n');
    const { apiKey, signingSecret } = shop.sandbox.credentials.test.merchant;
    const client = new CheckoutClient({ baseUrl: shop.sandbox.url, apiKey, signingSecret });
    const payment = await client.payments.create({ amount: '10.00', referenceId: 'order-never-settles' });
    expect((await simulate(shop.sandbox, `/sandbox/payments/${payment.id}/deposit`, { amount: '10.00' })).status).toBe(200);
    const store = await openStore('file:.checkout-kit', { cwd: shop.dir });
    await store.updateResource({ kind: 'payment', id: payment.id, source: 'checkout' });
    await store.close();

    const result = await execCli(['reconcile', '--json', '--older-than', '0'], { cwd: shop.dir, env: sandboxEnv(shop.sandbox) });
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout)).toMatchObject({ skipped: false, checked: 1, fulfilled: 0, failed: 1 });
    const key = `payment:${payment.id}:paid`;
    expect(result.stderr).toContain(`the paid handler never settled for ${key}`);
    const after = await openStore('file:.checkout-kit', { cwd: shop.dir });
    try {
      expect(await after.getRun(key)).toMatchObject({ status: 'failed', attempts: 1, lastError: expect.stringContaining(`checkout-kit retry ${key}`) });
      // The pass ended and gave its lock back: the next cron pass is not skipped.
      expect(await after.acquireLock('reconcile', 'next-pass', 1000)).toBe(true);
    } finally {
      await after.close();
    }
  });
});

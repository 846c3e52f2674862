import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, openShop, simulate } from '../sandbox/helpers.js';
import { execCli, sandboxEnv, spawnCli, terminateAll, waitForLine } from '../support/cli.js';
import { eventually } from '../support/ports.js';
import { createdPaymentId, postCheckout } from '../support/post-checkout.js';

const children: Array<ReturnType<typeof spawnCli>> = [];
afterEach(async () => {
  await terminateAll(children);
  await cleanup();
});

const HANDLERS = `
import { appendFileSync } from 'node:fs';
export default {
  async paid(payment, ctx) { appendFileSync(new URL('./calls.log', import.meta.url), ctx.key + ' ' + ctx.source + '\\n'); },
};
`;

describe('checkout-kit serve + reconcile (child processes, real sandbox)', () => {
  it('checkout redirects, the webhook fulfils once, reconcile beside the running receiver finds nothing more', async () => {
    const { dir, port, sandbox } = await openShop('ck-serve-', HANDLERS);
    const env = sandboxEnv(sandbox);
    const serve = spawnCli(['serve', '--port', String(port)], { cwd: dir, env });
    children.push(serve);
    await waitForLine(serve, /listening on (http:\/\/\S+)/);

    const created = await fetch(`http://127.0.0.1:${port}/checkout`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'orderId=o-1&amount=15&email=b%40example.com',
    });
    expect(created.status).toBe(303);
    const paymentId = createdPaymentId(created);
    expect((await simulate(sandbox, `/sandbox/payments/${paymentId}/deposit`, { amount: '15' })).status).toBe(200);

    const log = join(dir, 'calls.log');
    const lines = await eventually(() => (existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : undefined));
    expect(lines).toEqual([`payment:${paymentId}:paid webhook`]);

    const reconciled = await execCli(['reconcile', '--json', '--older-than', '0'], { cwd: dir, env });
    expect(reconciled.code).toBe(0);
    expect(JSON.parse(reconciled.stdout)).toMatchObject({ skipped: false, fulfilled: 0, failed: 0 });
    const back = await fetch(`http://127.0.0.1:${port}/checkout/return?orderId=o-1`, { headers: { accept: 'application/json' } });
    expect(await back.json()).toMatchObject({ state: 'paid' });
    expect(readFileSync(log, 'utf8').trim().split('\n')).toHaveLength(1);
  });

  it('a missed webhook is fulfilled by the next reconcile, once, and counted as missed', async () => {
    const { dir, port, sandbox } = await openShop('ck-reconcile-', HANDLERS, { faults: { drop: 1 } });
    const env = sandboxEnv(sandbox);
    const serve = spawnCli(['serve', '--port', String(port)], { cwd: dir, env });
    children.push(serve);
    await waitForLine(serve, /listening on/);
    const created = await postCheckout(`http://127.0.0.1:${port}`, { orderId: 'o-2', amount: '5' });
    const paymentId = createdPaymentId(created);
    await simulate(sandbox, `/sandbox/payments/${paymentId}/deposit`, { amount: '5' });
    await sandbox.webhooksIdle();

    const first = await execCli(['reconcile', '--json', '--older-than', '0'], { cwd: dir, env });
    expect(first.code).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({ checked: 1, fulfilled: 1, missedByWebhooks: 1 });
    const second = await execCli(['reconcile', '--json', '--older-than', '0'], { cwd: dir, env });
    expect(JSON.parse(second.stdout)).toMatchObject({ checked: 0, fulfilled: 0 });
    expect(readFileSync(join(dir, 'calls.log'), 'utf8').trim().split('\n')).toEqual([`payment:${paymentId}:paid reconcile`]);
  });
});

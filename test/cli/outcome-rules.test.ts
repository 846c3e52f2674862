import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, openShop, simulate, tempDir } from '../sandbox/helpers.js';
import { execCli, runCli, sandboxEnv, spawnCli, terminateAll, waitForLine } from '../support/cli.js';
import { createdPaymentId, postCheckout } from '../support/post-checkout.js';
import { openStore } from '../../src/store/open.js';

const children: Array<ReturnType<typeof spawnCli>> = [];
afterEach(async () => {
  await terminateAll(children);
  await cleanup();
});

// Every outcome logs itself, so a wrong verdict shows as a wrong line.
const HANDLERS = `
import { appendFileSync } from 'node:fs';
const log = (payment, ctx) => appendFileSync(new URL('./calls.log', import.meta.url), ctx.key + ' ' + ctx.source + '\\n');
export default { paid: log, overpaid: log, underpaid: log, expired: log };
`;

describe('outcome rules from the configuration, in every command', () => {
  it('reconcile classifies with CHECKOUT_UNDERPAY_TOLERANCE (9.995 of 10 is paid, not underpaid), as serve does', async () => {
    // Every webhook is lost: only reconcile (on cron) learns of the payment.
    const { dir, port, sandbox } = await openShop('ck-tolerance-', HANDLERS, { faults: { drop: 1 } });
    const env = sandboxEnv(sandbox, { CHECKOUT_UNDERPAY_TOLERANCE: '0.01' }, { invoiceKey: false });
    const serve = spawnCli(['serve', '--port', String(port)], { cwd: dir, env });
    children.push(serve);
    await waitForLine(serve, /listening on/);

    const created = await postCheckout(`http://127.0.0.1:${port}`, { orderId: 'o-short', amount: '10' });
    expect(created.status).toBe(303);
    const paymentId = createdPaymentId(created);
    expect((await simulate(sandbox, `/sandbox/payments/${paymentId}/deposit`, { amount: '9.995' })).status).toBe(200);
    expect((await simulate(sandbox, `/sandbox/payments/${paymentId}/expire`)).status).toBe(200);
    await sandbox.webhooksIdle();

    const reconciled = await execCli(['reconcile', '--json', '--older-than', '0'], { cwd: dir, env });
    expect(reconciled.stderr).toBe('');
    expect(reconciled.code).toBe(0);
    expect(JSON.parse(reconciled.stdout)).toMatchObject({ checked: 1, fulfilled: 1, failed: 0 });
    const log = join(dir, 'calls.log');
    expect(existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : []).toEqual([`payment:${paymentId}:paid reconcile`]);

    // The server, asked by the buyer's return, agrees; nothing more is called.
    const back = await fetch(`http://127.0.0.1:${port}/checkout/return?orderId=o-short`, { headers: { accept: 'application/json' } });
    expect(await back.json()).toMatchObject({ state: 'paid', outcome: 'paid', amountReceived: '9.995', confirmed: true });
    const shown = await execCli(['payments', 'show', paymentId, '--json'], { cwd: dir, env });
    expect(JSON.parse(shown.stdout)).toMatchObject({ record: { outcome: 'paid', outcomeSource: 'reconcile' } });
    expect(readFileSync(log, 'utf8').trim().split('\n')).toHaveLength(1);
  });

  it('doctor shows the outcome rules every command uses', async () => {
    const dir = await tempDir('ck-doctor-');
    const env = { CHECKOUT_BASE_URL: 'http://127.0.0.1:9' };
    const rule = async (extra: Record<string, string>) => {
      const result = await runCli(['doctor', '--json'], { cwd: dir, env: { ...env, ...extra } });
      return (JSON.parse(result.stdout) as Array<{ check: string; result: string; detail: string }>).find((c) => c.check === 'outcome rules');
    };
    expect(await rule({})).toEqual({ check: 'outcome rules', result: 'ok', detail: 'underpay tolerance none (exact amount); status map EXPIRED=closed' });
    expect(await rule({ CHECKOUT_UNDERPAY_TOLERANCE: '0.01,1%', CHECKOUT_STATUS_MAP: 'EXPIRED=closed,CONFIRMING=hold' })).toEqual({
      check: 'outcome rules',
      result: 'ok',
      detail: 'underpay tolerance 0.01 or 1% (the larger wins); status map EXPIRED=closed, CONFIRMING=hold',
    });
    expect(await rule({ CHECKOUT_UNDERPAY_TOLERANCE: '1%' })).toMatchObject({ detail: 'underpay tolerance 1%; status map EXPIRED=closed' });

    const human = await runCli(['doctor'], { cwd: dir, env: { ...env, CHECKOUT_UNDERPAY_TOLERANCE: '0.5%' } });
    expect(human.stdout).toMatch(/outcome rules\s+ok\s+underpay tolerance 0\.5%; status map EXPIRED=closed/);

    const bad = await runCli(['doctor', '--json'], { cwd: dir, env: { ...env, CHECKOUT_STATUS_MAP: 'EXPIRED=gone' } });
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stdout)).toEqual([
      { check: 'configuration', result: 'fail', detail: expect.stringMatching(/^CHECKOUT_STATUS_MAP "EXPIRED=gone" is not a status map/) },
    ]);
  });

  it.each([['reconcile'], ['serve', '--port', '0']])('a malformed outcome rule stops `%s` with one clear line and exit 2', async (...args) => {
    const dir = await tempDir('ck-bad-rule-');
    const result = await runCli(args, { cwd: dir, env: { CHECKOUT_BASE_URL: 'http://127.0.0.1:9', CHECKOUT_UNDERPAY_TOLERANCE: '2%,3%' } });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      'checkout-kit: CHECKOUT_UNDERPAY_TOLERANCE "2%,3%" is not a tolerance (give at most one amount and one percent): use an amount like 0.01, a percent like 1%, or both as 0.01,1%.\n',
    );
  });

  // They decide no outcome: an operator reading the store is not stopped by a variable they do not use
  // (serve, reconcile and doctor report it), and they start without loading the configuration's checks.
  it('the commands that only read the store read only CHECKOUT_STORE: a malformed outcome rule does not stop `payments list`', async () => {
    const dir = await tempDir('ck-bad-rule-');
    const store = await openStore(`file:${join(dir, '.checkout-kit')}`);
    await store.close();
    const result = await runCli(['payments', 'list'], { cwd: dir, env: { CHECKOUT_UNDERPAY_TOLERANCE: '2%,3%' } });
    expect(result).toMatchObject({ code: 0, stdout: '(none)\n' });
  });
});

import { mkdtemp, open, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open.js';
import { execCli, runCli } from '../support/cli.js';
import { samplePayment } from '../support/fixtures.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ck-cli-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function seed() {
  const store = await openStore('file:.checkout-kit', { cwd: dir });
  const payment = samplePayment();
  const body = JSON.stringify({ id: 'evt_1', type: 'payment.created', createdAt: new Date().toISOString(), data: payment });
  await store.insertEvent({
    id: 'evt_1',
    type: 'payment.created',
    environment: 'test',
    createdAt: new Date().toISOString(),
    receivedAt: new Date().toISOString(),
    resourceKind: 'payment',
    resourceId: payment.id,
    body,
  });
  await store.updateResource({ kind: 'payment', id: payment.id, orderId: 'order-7', outcome: 'paid', source: 'reconcile', snapshot: payment });
  await store.enqueueRun({ key: `payment:${payment.id}:paid`, kind: 'fulfillment', data: {} });
  await store.claimRun(`payment:${payment.id}:paid`, { owner: 'me', leaseMs: 1000 });
  await store.failRun(`payment:${payment.id}:paid`, 'me', { error: 'no stock' });
  await store.close();
  return { payment, body };
}

describe('inspection commands', () => {
  it('events list and show read the configured store; show prints the raw body', async () => {
    const { body } = await seed();
    const list = await runCli(['events', 'list', '--json'], { cwd: dir });
    expect(list.code).toBe(0);
    expect(JSON.parse(list.stdout)).toMatchObject([{ id: 'evt_1', type: 'payment.created', run: { status: 'pending' } }]);
    const show = await runCli(['events', 'show', 'evt_1'], { cwd: dir });
    expect(show.code).toBe(0);
    expect(show.stdout).toContain(body);
    const missing = await runCli(['events', 'show', 'evt_nope'], { cwd: dir });
    expect(missing).toMatchObject({ code: 2, stderr: 'checkout-kit: No event evt_nope in the store: see `checkout-kit events list`.\n' });
  });

  it('payments list/show, runs --failed and retry', async () => {
    const { payment } = await seed();
    const list = await runCli(['payments', 'list'], { cwd: dir });
    expect(list.stdout).toMatch(new RegExp(`${payment.id}\\s+order-7\\s+paid\\s+reconcile\\s+yes`));
    const show = await runCli(['payments', 'show', payment.id], { cwd: dir });
    expect(show.stdout).toContain('outcome: paid (learned by reconcile)');
    expect(show.stdout).toMatch(/failed\s+1\s+no stock/);
    const failed = await runCli(['runs', '--failed', '--json'], { cwd: dir });
    expect(JSON.parse(failed.stdout)).toHaveLength(1);
    expect(await runCli(['retry'], { cwd: dir })).toMatchObject({ code: 2 });
    const retried = await runCli(['retry', '--all', '--json'], { cwd: dir });
    expect(JSON.parse(retried.stdout)).toEqual({ retried: 1 });
    expect(JSON.parse((await runCli(['runs', '--failed', '--json'], { cwd: dir })).stdout)).toHaveLength(0);
  });

  it('payments show finds a payment by its order id, e-mail or event id as by its id; several matches are named, none is exit 2', async () => {
    const { payment } = await seed();
    const byId = await execCli(['payments', 'show', payment.id, '--json'], { cwd: dir });
    expect(byId.code).toBe(0);
    for (const term of ['order-7', 'BUYER@example.com', 'evt_1']) {
      expect(await execCli(['payments', 'show', term, '--json'], { cwd: dir }), term).toEqual(byId);
    }
    const other = samplePayment({ email: 'buyer@example.com' });
    const store = await openStore('file:.checkout-kit', { cwd: dir });
    await store.updateResource({ kind: 'payment', id: other.id, orderId: 'order-8', outcome: 'pending', source: 'webhook', snapshot: other });
    await store.close();
    const both = await execCli(['payments', 'show', 'buyer@example.com'], { cwd: dir });
    expect(both.code).toBe(2);
    expect(both.stdout).toBe('');
    expect(both.stderr).toMatch(/^checkout-kit: buyer@example\.com matches several payments \((\S+), (\S+)\): show one by its id\.\n$/);
    expect(both.stderr).toContain(payment.id);
    expect(both.stderr).toContain(other.id);
    expect(await execCli(['invoices', 'show', 'order-7'], { cwd: dir })).toEqual({
      code: 2,
      stdout: '',
      stderr: 'checkout-kit: No invoice order-7 in the store: see `checkout-kit invoices list` (show also takes an order id, e-mail or event id).\n',
    });
  });

  it('events dead-letters shows the newest first, takes --limit, and a list cut there says more are stored', async () => {
    const store = await openStore('file:.checkout-kit', { cwd: dir });
    for (const n of [1, 2, 3]) {
      await store.insertDeadLetter({ receivedAt: new Date(Date.UTC(2030, 0, 1, 0, n)).toISOString(), reason: `unparsable ${n}`, body: 'x', headers: {} });
    }
    await store.close();
    const cut = await execCli(['events', 'dead-letters', '--limit', '2'], { cwd: dir });
    expect(cut.code).toBe(0);
    expect(cut.stdout.match(/unparsable \d/g)).toEqual(['unparsable 3', 'unparsable 2']);
    expect(cut.stdout.trimEnd().split('\n').at(-1)).toBe('(the newest 2; more are stored: raise --limit to see them)');
    const json = await execCli(['events', 'dead-letters', '--limit', '2', '--json'], { cwd: dir });
    expect((JSON.parse(json.stdout) as Array<{ reason: string }>).map((letter) => letter.reason)).toEqual(['unparsable 3', 'unparsable 2']);
    expect((await execCli(['events', 'dead-letters'], { cwd: dir })).stdout).not.toContain('more are stored');
    expect(await execCli(['events', 'dead-letters', '--limit', '0'], { cwd: dir })).toMatchObject({ code: 2 });
  });

  it('payments list, runs and events list show the newest first, and a list cut at --limit says more are stored', async () => {
    const store = await openStore('file:.checkout-kit', { cwd: dir });
    for (const n of [1, 2, 3]) {
      const payment = samplePayment();
      await store.updateResource({ kind: 'payment', id: payment.id, orderId: `order-${n}`, outcome: 'pending', source: 'webhook', snapshot: payment });
      await store.enqueueRun({ key: `payment:${payment.id}:paid`, kind: 'fulfillment', data: {} });
      const at = new Date(Date.UTC(2030, 0, 1, 0, n)).toISOString();
      await store.insertEvent({
        id: `evt_${n}`,
        type: 'payment.created',
        environment: 'test',
        createdAt: at,
        receivedAt: at,
        resourceKind: 'payment',
        resourceId: payment.id,
        body: '{}',
      });
    }
    await store.close();
    const more = '(the newest 2; more are stored: raise --limit to see them)';

    const payments = await execCli(['payments', 'list', '--limit', '2'], { cwd: dir });
    expect(payments.code).toBe(0);
    const lines = payments.stdout.trimEnd().split('\n');
    expect(lines.slice(2, 4).map((line) => line.split(/\s+/)[1])).toEqual(['order-3', 'order-2']);
    expect(lines.slice(4)).toEqual([more]);
    const json = await execCli(['payments', 'list', '--limit', '2', '--json'], { cwd: dir });
    expect((JSON.parse(json.stdout) as Array<{ orderId: string }>).map((p) => p.orderId)).toEqual(['order-3', 'order-2']);
    const all = await execCli(['payments', 'list', '--limit', '3'], { cwd: dir });
    expect(all.stdout).not.toContain('more are stored');

    const runs = await execCli(['runs', '--limit', '2', '--json'], { cwd: dir });
    const keys = (JSON.parse(runs.stdout) as Array<{ key: string }>).map((run) => run.key);
    expect(keys).toEqual([expect.stringMatching(/^event:evt_3$/), expect.stringMatching(/^payment:.*:paid$/)]);
    expect((await execCli(['runs', '--limit', '2'], { cwd: dir })).stdout.trimEnd().split('\n').at(-1)).toBe(more);

    const events = await execCli(['events', 'list', '--limit', '2'], { cwd: dir });
    expect(events.stdout.trimEnd().split('\n').at(-1)).toBe(more);
    expect(events.stdout).toMatch(/evt_3[^]*evt_2/);
  });

  it('runs shows when a pending run is tried next, and no time beside a failed or done run, which nothing tries again by itself', async () => {
    const store = await openStore('file:.checkout-kit', { cwd: dir });
    const due = '2030-01-01T00:00:00.000Z';
    await store.enqueueRun({ key: 'payment:p-pending:paid', kind: 'fulfillment', data: {}, nextAttemptAt: due });
    for (const [key, end] of [
      ['payment:p-failed:paid', 'fail'],
      ['payment:p-done:paid', 'done'],
    ] as const) {
      await store.enqueueRun({ key, kind: 'fulfillment', data: {}, nextAttemptAt: due });
      await store.claimRun(key, { owner: 'me', leaseMs: 1000, now: new Date(due) });
      if (end === 'fail') await store.failRun(key, 'me', { error: 'no stock' });
      else await store.completeRun(key, 'me');
    }
    await store.close();
    const runs = await execCli(['runs'], { cwd: dir });
    expect(runs.code).toBe(0);
    const rows = runs.stdout
      .trimEnd()
      .split('\n')
      .slice(2)
      .map((line) => line.split(/\s{2,}/));
    expect(rows).toEqual([
      ['payment:p-done:paid', 'done', '1'],
      ['payment:p-failed:paid', 'failed', '1', 'no stock'],
      ['payment:p-pending:paid', 'pending', '0', due],
    ]);
  });

  it('bad configuration is one clear line and exit 2', async () => {
    const result = await runCli(['events', 'list'], { cwd: dir, env: { CHECKOUT_STORE: 'mysql://db' } });
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/^checkout-kit: CHECKOUT_STORE "mysql:\/\/db" is none of file:<dir>, postgres:\/\/… or memory:/);
  });

  it('usage errors exit 2', async () => {
    expect((await runCli(['reconcile', '--older-than', 'soon'], { cwd: dir })).code).toBe(2);
    expect((await runCli(['events', 'list', '--status', 'weird'], { cwd: dir })).code).toBe(2);
    expect((await runCli(['no-such-command'], { cwd: dir })).code).toBe(2);
  });

  it('doctor reports each check and fails when the configuration is incomplete', async () => {
    const result = await runCli(['doctor', '--json'], { cwd: dir, env: { CHECKOUT_BASE_URL: 'http://127.0.0.1:9' } });
    expect(result.code).toBe(1);
    const checks = JSON.parse(result.stdout) as Array<{ check: string; result: string }>;
    // No store yet: what a new shop has. The diagnosis creates none.
    expect(checks.find((c) => c.check === 'store')).toMatchObject({ result: 'warn', detail: expect.stringContaining('`checkout-kit serve` creates it') });
    expect(await readdir(dir)).toEqual([]);
    expect(checks.find((c) => c.check === 'webhook secrets')?.result).toBe('fail');
    // No module at all: the engine may be wired into the backend's own code.
    expect(checks.find((c) => c.check === 'fulfillment module')?.result).toBe('warn');
    // A bad LOG_LEVEL is its own row, not a store that fails to open.
    const loud = await runCli(['doctor', '--json'], { cwd: dir, env: { CHECKOUT_BASE_URL: 'http://127.0.0.1:9', LOG_LEVEL: 'loud' } });
    const rows = JSON.parse(loud.stdout) as Array<{ check: string; result: string; detail: string }>;
    expect(rows.find((c) => c.check === 'log level')).toMatchObject({
      result: 'fail',
      detail: expect.stringContaining('The log level "loud" (LOG_LEVEL) is not one of'),
    });
    expect(rows.find((c) => c.check === 'store')?.result).toBe('warn');
  });

  it('doctor opens an existing store read-only, and fails a damaged one naming it', async () => {
    await seed();
    const env = { CHECKOUT_BASE_URL: 'http://127.0.0.1:9' };
    const storeRow = async () =>
      (JSON.parse((await runCli(['doctor', '--json'], { cwd: dir, env })).stdout) as Array<{ check: string; result: string; detail: string }>).find(
        (c) => c.check === 'store',
      );
    expect(await storeRow()).toMatchObject({ result: 'ok', detail: expect.stringContaining(join(dir, '.checkout-kit')) });
    const file = join(dir, '.checkout-kit', 'store.sqlite');
    await writeFile(file, 'not a database, but long enough to be read as one: '.repeat(100));
    expect(await storeRow()).toMatchObject({ result: 'fail', detail: expect.stringContaining('is damaged') });
    expect(await readFile(file, 'utf8')).toMatch(/^not a database/);
  });

  it('doctor fails an embedded store damaged in pages that opening it does not read, as store check finds it', async () => {
    const store = await openStore('file:.checkout-kit', { cwd: dir });
    const payment = samplePayment();
    for (let i = 0; i < 300; i++) {
      const at = new Date().toISOString();
      const body = JSON.stringify({ id: `evt_${i}`, type: 'payment.created', createdAt: at, data: payment });
      await store.insertEvent({
        id: `evt_${i}`,
        type: 'payment.created',
        environment: 'test',
        createdAt: at,
        receivedAt: at,
        resourceKind: 'payment',
        resourceId: payment.id,
        body,
      });
    }
    await store.close();
    // Pages past the header and the schema overwritten: the store still opens.
    const file = join(dir, '.checkout-kit', 'store.sqlite');
    const handle = await open(file, 'r+');
    await handle.write(Buffer.alloc(8192, 0x5a), 0, undefined, 8192);
    await handle.close();
    const env = { CHECKOUT_BASE_URL: 'http://127.0.0.1:9' };
    expect((await runCli(['store', 'check'], { cwd: dir, env })).code).toBe(1);
    const result = await runCli(['doctor', '--json'], { cwd: dir, env });
    expect(result.code).toBe(1);
    expect((JSON.parse(result.stdout) as Array<{ check: string; result: string; detail: string }>).find((c) => c.check === 'store')).toEqual({
      check: 'store',
      result: 'fail',
      detail: expect.stringMatching(/^The store SQLite .*store\.sqlite is damaged \(.+\): `checkout-kit store check` lists what; restore the latest backup/),
    });
  });

  it('doctor fails a fulfillment module that serve and reconcile would refuse', async () => {
    const env = { CHECKOUT_BASE_URL: 'http://127.0.0.1:9', CHECKOUT_WEBHOOK_SECRET: 'whsec_test', CHECKOUT_REDIRECT_HOSTS: 'shop.example' };
    /** The module check, each module under a name of its own (this process keeps what it imported). */
    const moduleCheck = async (name: string, text?: string) => {
      if (text !== undefined) await writeFile(join(dir, name), text);
      const result = await runCli(['doctor', '--json'], { cwd: dir, env: name === 'fulfillment.mjs' ? env : { ...env, CHECKOUT_HANDLERS: name } });
      const checks = JSON.parse(result.stdout) as Array<{ check: string; result: string; detail: string }>;
      // The credentials are left unset, so they fail too: what else fails is the module's doing.
      return {
        code: result.code,
        check: checks.find((c) => c.check === 'fulfillment module'),
        failing: checks.filter((c) => c.result === 'fail').map((c) => c.check),
      };
    };
    // Found by its default name, or named: either way it is meant to load.
    expect(await moduleCheck('fulfillment.mjs', 'export default { shipped() {} };\n')).toMatchObject({
      code: 1,
      failing: ['merchant credentials', 'fulfillment module'],
      check: { result: 'fail', detail: expect.stringContaining('unknown handler "shipped"') },
    });
    expect(await moduleCheck('broken.mjs', 'export default {\n')).toMatchObject({
      code: 1,
      failing: ['merchant credentials', 'fulfillment module'],
      check: { result: 'fail', detail: expect.stringContaining('Could not load the fulfillment module') },
    });
    expect(await moduleCheck('missing.mjs')).toMatchObject({
      code: 1,
      failing: ['merchant credentials', 'fulfillment module'],
      check: { result: 'fail', detail: expect.stringContaining('does not exist') },
    });
    expect(await moduleCheck('good.mjs', 'export default { paid() {} };\n')).toMatchObject({
      check: { result: 'ok', detail: 'handlers: paid' },
      failing: ['merchant credentials'],
    });
  });
});

import { randomBytes } from 'node:crypto';
import { readFileSync, existsSync } from 'node:fs';
import { mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, openShop, simulate } from '../sandbox/helpers.js';
import { execCli, sandboxEnv, spawnCli, terminateAll, waitForLine } from '../support/cli.js';
import { eventually, holdPort } from '../support/ports.js';
import { createdPaymentId, postCheckout } from '../support/post-checkout.js';
import { SqliteStore } from '../../src/store/index.js';

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
    // The pass queues the handler's run and runs it, unless serve's run loop claims it first (then
    // the pass finds it in progress and does not count it): once either way, and learned by reconcile.
    const pass = JSON.parse(first.stdout) as { checked: number; missedByWebhooks: number; fulfilled: number };
    expect(pass).toMatchObject({ checked: 1, missedByWebhooks: 1 });
    expect([0, 1]).toContain(pass.fulfilled);
    // Whichever process ran it, the run is done before the handler calls are counted.
    const store = new SqliteStore({ dir: join(dir, '.checkout-kit'), readonly: true });
    try {
      await expect.poll(async () => (await store.getRun(`payment:${paymentId}:paid`))?.status, { timeout: 30_000 }).toBe('done');
    } finally {
      await store.close();
    }
    const log = join(dir, 'calls.log');
    expect(readFileSync(log, 'utf8').trim().split('\n')).toEqual([`payment:${paymentId}:paid reconcile`]);
    const second = await execCli(['reconcile', '--json', '--older-than', '0'], { cwd: dir, env });
    expect(JSON.parse(second.stdout)).toMatchObject({ checked: 0, fulfilled: 0 });
    expect(readFileSync(log, 'utf8').trim().split('\n')).toEqual([`payment:${paymentId}:paid reconcile`]);
  });

  it.skipIf(!process.env.DATABASE_URL)(
    'on PostgreSQL, serve opens its whole pool before it listens (no connection set-up on the first deliveries)',
    async () => {
      const { dir, port, sandbox } = await openShop('ck-serve-pg-', HANDLERS);
      const name = `ck_serve_${randomBytes(5).toString('hex')}`;
      const admin = new pg.Client({ connectionString: process.env.DATABASE_URL });
      await admin.connect();
      try {
        const serve = spawnCli(['serve', '--port', String(port)], {
          cwd: dir,
          env: sandboxEnv(sandbox, { CHECKOUT_STORE: `${process.env.DATABASE_URL}?schema=${name}&application_name=${name}` }),
        });
        children.push(serve);
        await waitForLine(serve, /listening on (http:\/\/\S+)/);
        const { rows } = await admin.query<{ n: string }>('SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = $1', [name]);
        expect(Number(rows[0]!.n)).toBe(10);
      } finally {
        await terminateAll(children);
        await admin.query(`DROP SCHEMA IF EXISTS "${name}" CASCADE`);
        await admin.end();
      }
    },
  );

  /** serve on a taken port must exit with one line: before the fix it printed the error and stayed up (the pool, the app's timers). */
  async function serveOnTakenPort(databaseUrl: string | undefined) {
    const { dir, sandbox } = await openShop('ck-serve-busy-', HANDLERS);
    const taken = await holdPort();
    const { port } = taken;
    const schema = `ck_busy_${randomBytes(5).toString('hex')}`;
    try {
      const extra: Record<string, string> = databaseUrl ? { CHECKOUT_STORE: `${databaseUrl}?schema=${schema}` } : {};
      const result = await execCli(['serve', '--port', String(port)], { cwd: dir, env: sandboxEnv(sandbox, extra) });
      expect(result.code).toBe(1);
      expect(result.stderr.trim().split('\n')).toEqual([
        `checkout-kit: 127.0.0.1:${port} is already in use by another process: stop it, or choose another port (--port or PORT).`,
      ]);
    } finally {
      await taken.release();
      if (databaseUrl) {
        const admin = new pg.Client({ connectionString: databaseUrl });
        await admin.connect();
        await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await admin.end();
      }
    }
  }

  it('a HOST that is not an address of this machine, or resolves to none, is one line saying what to give, exit 2', async () => {
    const { dir, port, sandbox } = await openShop('ck-serve-host-', HANDLERS);
    // 192.0.2.1 is TEST-NET-1 (RFC 5737), never a local address; .invalid never resolves (RFC 6761).
    const elsewhere = await execCli(['serve', '--port', String(port)], { cwd: dir, env: sandboxEnv(sandbox, { HOST: '192.0.2.1' }) });
    expect([elsewhere.code, elsewhere.stdout, elsewhere.stderr]).toEqual([
      2,
      '',
      "checkout-kit: 192.0.2.1 is not an address of this machine, so nothing can listen on it: use 127.0.0.1, 0.0.0.0 (every interface) or one of this machine's addresses (--host or HOST).\n",
    ]);
    const unknown = await execCli(['serve', '--port', String(port), '--host', 'shop.invalid'], { cwd: dir, env: sandboxEnv(sandbox) });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(
      /^checkout-kit: shop\.invalid does not resolve to an address \(E[A-Z_]+\): give an IP address, or a name this machine resolves \(--host or HOST\)\.\n$/,
    );
  });

  it('refuses a public URL that is not one (flag or environment) in one line, before listening, rather than failing every checkout with a 500', async () => {
    const { dir, port, sandbox } = await openShop('ck-serve-publicurl-', HANDLERS);
    const flag = await execCli(['serve', '--port', String(port), '--public-url', 'notaurl'], { cwd: dir, env: sandboxEnv(sandbox) });
    expect([flag.code, flag.stderr]).toEqual([2, 'checkout-kit: --public-url takes an http(s) URL such as https://shop.example, got "notaurl".\n']);
    const env = await execCli(['serve', '--port', String(port)], { cwd: dir, env: sandboxEnv(sandbox, { CHECKOUT_PUBLIC_URL: 'http://a b' }) });
    expect([env.code, env.stderr]).toEqual([2, 'checkout-kit: CHECKOUT_PUBLIC_URL "http://a b" is not an http(s) URL.\n']);
    for (const result of [flag, env]) expect(result.stdout).not.toMatch(/listening/);
  });

  it('refuses to start without the service configured (it would fulfil from the webhook alone), leaving the store untouched', async () => {
    const { dir, port, sandbox } = await openShop('ck-serve-noservice-', HANDLERS);
    const unsets: Array<Record<string, string>> = [
      { CHECKOUT_BASE_URL: '' },
      { CHECKOUT_API_KEY: '', CHECKOUT_INVOICE_KEY: '' },
      // A partner's key without its signing secret: no client could read a payment with it.
      { CHECKOUT_API_KEY: '', CHECKOUT_INVOICE_KEY: '', CHECKOUT_PARTNER_API_KEY: sandbox.credentials.test.partner.apiKey },
    ];
    for (const unset of unsets) {
      const result = await execCli(['serve', '--port', String(port)], { cwd: dir, env: sandboxEnv(sandbox, unset) });
      expect(result.code).toBe(2);
      expect(result.stderr.trim()).toBe(
        'checkout-kit: serve confirms every event with the service before a handler runs: set CHECKOUT_BASE_URL and CHECKOUT_API_KEY (or CHECKOUT_INVOICE_KEY), or for a partner platform CHECKOUT_PARTNER_API_KEY and CHECKOUT_PARTNER_SIGNING_SECRET; `checkout-kit doctor` checks them.',
      );
      expect(result.stdout).not.toMatch(/listening/);
      // Refused before the store is opened: no store folder is made.
      expect(existsSync(join(dir, '.checkout-kit'))).toBe(false);
    }
    // Configured, the same folder serves: the refusals left nothing behind that stops it.
    const serve = spawnCli(['serve', '--port', String(port)], { cwd: dir, env: sandboxEnv(sandbox) });
    children.push(serve);
    await waitForLine(serve, /listening on (http:\/\/\S+)/);
  });

  it('exits 2 with one line, not 0 in silence, when the fulfillment module awaits something that never comes', async () => {
    const { dir, port, sandbox } = await openShop('ck-serve-stuck-', 'await new Promise(() => {});\nexport default {};\n');
    for (const args of [['serve', '--port', String(port)], ['reconcile']]) {
      const result = await execCli(args, { cwd: dir, env: sandboxEnv(sandbox) });
      expect(result.code).toBe(2);
      expect(result.stderr.trim()).toBe(
        `checkout-kit: The fulfillment module ${join(dir, 'fulfillment.mjs')} never finished loading: its top-level await waits for something that nothing left running can bring. Check what it awaits.`,
      );
    }
  });

  it("a fulfillment module that will not load: one line with the reason (a syntax error's file and line); one in a CommonJS package loads", async () => {
    const { dir, port, sandbox } = await openShop('ck-serve-badmodule-', HANDLERS);
    await rm(join(dir, 'fulfillment.mjs'));
    await writeFile(join(dir, 'fulfillment.ts'), 'export default {\n  async paid() {}\n);\n');
    const syntax = await execCli(['serve', '--port', String(port)], { cwd: dir, env: sandboxEnv(sandbox) });
    expect(syntax.code).toBe(2);
    // Before: the line ended at "Transform failed with 1 error:", the rest being on the next lines.
    expect(syntax.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(
        /^checkout-kit: Could not load the fulfillment module .*fulfillment\.ts: Transform failed with 1 error: .*fulfillment\.ts:3:0: ERROR: Expected "}" but found "\)"$/,
      ),
    ]);

    // What `npm init -y` (npm 11) writes, with the package installed beside it: a CommonJS
    // package, whose `.ts` module tsx loads as CommonJS, which requires checkout-kit's CommonJS entry.
    await writeFile(join(dir, 'fulfillment.ts'), "import { defineFulfillment } from 'checkout-kit';\nexport default defineFulfillment({ async paid() {} });\n");
    await writeFile(join(dir, 'package.json'), JSON.stringify({ name: 'shop', type: 'commonjs' }));
    await mkdir(join(dir, 'node_modules'));
    await symlink(fileURLToPath(new URL('../..', import.meta.url)), join(dir, 'node_modules', 'checkout-kit'));
    const commonjs = spawnCli(['serve', '--port', String(port)], { cwd: dir, env: sandboxEnv(sandbox) });
    children.push(commonjs);
    // Loading the CommonJS entry through tsx (the whole package, compiled on the fly) is the slowest
    // start of the suite: on a busy machine it took over 30 s.
    await waitForLine(commonjs, /listening on http/, 150_000);
  }, 240_000);

  it('exits with one line when its port is taken (embedded store)', () => serveOnTakenPort(undefined));
  it.skipIf(!process.env.DATABASE_URL)('exits with one line when its port is taken (PostgreSQL: its open pool does not keep it alive)', () =>
    serveOnTakenPort(process.env.DATABASE_URL),
  );
});

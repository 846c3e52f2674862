import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, openShop, simulate } from '../sandbox/helpers.js';
import { execCli, sandboxEnv, spawnCli, stopProcess, waitForLine } from '../support/cli.js';
import { eventually, freePort } from '../support/ports.js';
import { tempDir } from '../support/temp-dirs.js';
import { createdPaymentId, postCheckout } from '../support/post-checkout.js';
import { parsePrometheusStrict, sampleValue } from '../support/prometheus.js';

// Through the processes a merchant runs: `serve --console` and `console` on a real
// embedded store fed by the sandbox, read over HTTP.

const children: Array<ReturnType<typeof spawnCli>> = [];
afterEach(async () => {
  for (const child of children.splice(0)) await stopProcess(child);
  await cleanup();
});

const HANDLERS = `export default { async paid() {} };\n`;

describe('checkout-kit serve --console and checkout-kit console (child processes)', () => {
  it('serve shows the console, /metrics, /healthz and /readyz; the console command shows the same store; off loopback it needs a token', async () => {
    const { dir, port, sandbox } = await openShop('ck-console-cli-', HANDLERS);
    const env = sandboxEnv(sandbox);
    const serve = spawnCli(['serve', '--port', String(port), '--console'], { cwd: dir, env });
    children.push(serve);
    const [, consoleLine] = (await waitForLine(serve, /console on (\S+) \(this machine only\)/)) as unknown as [string, string];
    expect(consoleLine).toBe(`http://127.0.0.1:${port}/checkout-kit/`);
    const base = `http://127.0.0.1:${port}`;

    const created = await postCheckout(base, { orderId: 'o-1', amount: '15', email: 'b@example.com' });
    const paymentId = createdPaymentId(created);
    expect((await simulate(sandbox, `/sandbox/payments/${paymentId}/deposit`, { amount: '15' })).status).toBe(200);

    const overview = await eventually(async () => {
      const page = await (await fetch(`${base}/checkout-kit/`)).text();
      return page.includes('data-count="events-last-hour">2<') ? page : undefined;
    });
    expect(overview).toContain('data-count="runs-failed">0<');
    // The handler runs after the event is stored: wait for its line on the payment's timeline.
    const payment = await eventually(async () => {
      const page = await (await fetch(`${base}/checkout-kit/payments/${paymentId}`)).text();
      return page.includes('paid handler completed') ? page : undefined;
    });
    expect(payment).toContain('data-field="outcome">paid (learned by webhook)<');
    expect(payment).toMatch(/paid handler completed \(attempt 1, \d+ ms\)/);

    const metrics = await fetch(`${base}/metrics`);
    expect(metrics.status).toBe(200);
    const families = parsePrometheusStrict(await metrics.text());
    expect(sampleValue(families, 'checkout_kit_events_stored_total')).toBe(2);
    expect(sampleValue(families, 'checkout_kit_handler_calls_total', { outcome: 'paid', result: 'completed' })).toBe(1);
    expect(sampleValue(families, 'checkout_kit_service_requests_total', { operation: 'payments.create', status: '201' })).toBe(1);
    expect(sampleValue(families, 'checkout_kit_service_requests_total', { operation: 'payments.get', status: '200' })).toBeGreaterThanOrEqual(1);
    expect(await (await fetch(`${base}/healthz`)).json()).toEqual({ ok: true });
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({
      ready: true,
      checks: { store: { ok: true }, backlog: { ok: true, pending: 0, limitSeconds: 600 } },
      reasons: [],
    });
    const unknown = await fetch(`${base}/nowhere`);
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ error: { code: 'not_found', message: 'No route GET /nowhere.' } });

    // The console command on the same store, beside the running serve.
    const consolePort = await freePort();
    const consoleProcess = spawnCli(['console', '--port', String(consolePort)], { cwd: dir, env });
    children.push(consoleProcess);
    await waitForLine(consoleProcess, /checkout-kit console on http:\/\/127\.0\.0\.1:\d+\/checkout-kit\/ \(this machine only; store: SQLite /);
    const other = `http://127.0.0.1:${consolePort}`;
    expect((await fetch(other, { redirect: 'manual' })).headers.get('location')).toBe('/checkout-kit/');
    const seen = await (await fetch(`${other}/checkout-kit/payments?learnedBy=webhook`)).text();
    expect(seen).toContain(`data-id="${paymentId}"`);
    expect(parsePrometheusStrict(await (await fetch(`${other}/metrics`)).text()).has('checkout_kit_runs')).toBe(true);

    // Anywhere but loopback needs CHECKOUT_CONSOLE_TOKEN: a usage error, one line, exit 2.
    const refused = await execCli(['console', '--host', '0.0.0.0', '--port', '0'], { cwd: dir, env });
    expect(refused.code).toBe(2);
    expect(refused.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/^checkout-kit: the console listens on 0\.0\.0\.0 only with CHECKOUT_CONSOLE_TOKEN set/),
    ]);
  });

  it('with CHECKOUT_CONSOLE_TOKEN set, refuses a plain request from this machine and answers the same request with the token; a browser signs in', async () => {
    const dir = await tempDir('ck-console-token-');
    const token = 'console-token-for-the-cli-test-4e8a1b7c09';
    const consoleProcess = spawnCli(['console', '--port', String(await freePort())], { cwd: dir, env: { CHECKOUT_CONSOLE_TOKEN: token } });
    children.push(consoleProcess);
    const [, base] = (await waitForLine(
      consoleProcess,
      /checkout-kit console on (http:\/\/127\.0\.0\.1:\d+)\/checkout-kit\/ \(anyone with CHECKOUT_CONSOLE_TOKEN \(this machine too\); store: SQLite /,
    )) as unknown as [string, string];

    const refusal = {
      error: {
        code: 'unauthorized',
        message: 'Missing or wrong console token: send CHECKOUT_CONSOLE_TOKEN as "Authorization: Bearer <token>", or sign in on the console\'s login page.',
      },
    };
    for (const path of ['/checkout-kit/', '/checkout-kit/payments', '/metrics']) {
      const plain = await fetch(`${base}${path}`);
      expect(plain.status, path).toBe(401);
      expect(await plain.json(), path).toEqual(refusal);
      expect((await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${token}` } })).status, path).toBe(200);
    }
    expect(await (await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${token}` } })).text()).toContain('checkout_kit_runs');
    // Health stays open to the orchestrator.
    expect((await fetch(`${base}/healthz`)).status).toBe(200);

    // A browser on this machine gets the sign-in page, and its cookie opens the console.
    const page = await fetch(`${base}/checkout-kit/`, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(401);
    expect(await page.text()).toContain('name="token"');
    const signedIn = await fetch(`${base}/checkout-kit/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token }).toString(),
      redirect: 'manual',
    });
    expect(signedIn.status).toBe(303);
    const cookie = (signedIn.headers.get('set-cookie') ?? '').split(';')[0] as string;
    const overview = await fetch(`${base}/checkout-kit/`, { headers: { cookie, accept: 'text/html' } });
    expect(overview.status).toBe(200);
    expect(await overview.text()).toContain('data-count="events-last-hour"');
  });

  it('runs without a fulfillment module, saying so; a store it cannot open stops it with that one line only', async () => {
    const dir = await tempDir('ck-console-nomodule-');
    const broken = await execCli(['console', '--port', '0'], { cwd: dir, env: { CHECKOUT_STORE: 'garbage://x' } });
    expect(broken.code).toBe(2);
    expect(broken.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/^checkout-kit: CHECKOUT_STORE "garbage:\/\/x" is none of file:<dir>, postgres:\/\/… or memory: \(tests only\)\.$/),
    ]);

    const consoleProcess = spawnCli(['console', '--port', String(await freePort())], { cwd: dir, env: {} });
    children.push(consoleProcess);
    let stderr = '';
    consoleProcess.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    await waitForLine(consoleProcess, /checkout-kit console on http:\/\/127\.0\.0\.1:\d+\/checkout-kit\//);
    // stderr and stdout are two pipes: the line may come after the listening one.
    await eventually(() => /The console runs without it/.test(stderr) || undefined);
    expect(stderr).toMatch(/^checkout-kit: No fulfillment module: .* The console runs without it: "Reconcile now" is off and retried runs wait for serve\.$/m);
  });
});

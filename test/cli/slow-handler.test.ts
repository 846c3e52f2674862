import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { execCli, spawnCli, stopProcess, waitForLine } from '../support/cli.js';
import { eventually, freePort } from '../support/ports.js';
import { createdPaymentId, postCheckout } from '../support/post-checkout.js';
import { removeTempDirs, tempDir } from '../support/temp-dirs.js';

// A handler running longer than a third of its run's lease (30 s here) has its lease renewed;
// every other process on the store (`payments list`, `runs`, `reconcile`) and `serve` after a
// restart must read what that renewal wrote. Everything here runs as real CLI processes:
// the sandbox, serve, and the commands beside it.

/** Its handler runs until the test creates the release file: past a third of its 30 s lease, so the lease is renewed. */
const HANDLERS = fileURLToPath(new URL('./fixtures/slow-fulfillment.mjs', import.meta.url));

const children: ChildProcess[] = [];

function start(args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }): ChildProcess {
  const child = spawnCli(args, options);
  children.push(child);
  return child;
}

afterEach(async () => {
  await Promise.all(children.splice(0).map((child) => stopProcess(child, 5_000)));
  await removeTempDirs();
});

interface Call {
  step: 'start' | 'end';
  id: string;
  key: string;
  source?: string;
  attempt?: number;
  pid: number;
  at: number;
}

function callsIn(log: string): Call[] {
  if (!existsSync(log)) return [];
  return readFileSync(log, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Call);
}

/** The `renew` ops in the embedded store's journal segments. */
describe('a fulfillment handler slower than a third of the dispatch lease (child processes, real sandbox)', () => {
  it('renews its lease, and the store stays readable by every other process and by serve after a restart; the handler runs once', async () => {
    const shop = await tempDir('ck-slow-shop-');
    const storeDir = await tempDir('ck-slow-store-');
    const sandboxDir = await tempDir('ck-slow-sandbox-');
    const log = join(shop, 'calls.jsonl');
    const release = join(shop, 'release');
    const calls = () => callsIn(log);
    const port = await freePort();

    // The service, as a process, delivering webhooks to serve.
    const sandbox = start(['sandbox', '--port', '0', '--data', sandboxDir, '--webhook-url', `http://127.0.0.1:${port}/webhooks/checkout`], {
      cwd: sandboxDir,
      env: { LOG_LEVEL: 'warn' },
    });
    const [, sandboxUrl, credentialsPath] = await waitForLine(sandbox, /sandbox listening on (http:\/\/127\.0\.0\.1:\d+)\ncredentials: (\S+)\n/);
    const creds = JSON.parse(await readFile(credentialsPath!, 'utf8'));
    const env = {
      CHECKOUT_BASE_URL: sandboxUrl!,
      CHECKOUT_API_KEY: creds.test.merchant.apiKey,
      CHECKOUT_SIGNING_SECRET: creds.test.merchant.signingSecret,
      CHECKOUT_INVOICE_KEY: creds.test.merchant.invoiceKey,
      CHECKOUT_WEBHOOK_SECRET: creds.webhookSecret,
      CHECKOUT_STORE: `file:${storeDir}`,
      CHECKOUT_HANDLERS: HANDLERS,
      SLOW_HANDLER_LOG: log,
      SLOW_HANDLER_RELEASE: release,
      CHECKOUT_HANDLER_LEASE: '30',
      LOG_LEVEL: 'warn',
    };
    /** Run a command beside serve on the same store; it must succeed. */
    const cliJson = async (args: string[]) => {
      const result = await execCli(args, { cwd: shop, env });
      expect(result.code, `checkout-kit ${args.join(' ')} exited ${result.code}:\n${result.stderr}`).toBe(0);
      return JSON.parse(result.stdout);
    };
    const startServe = async () => {
      const serve = start(['serve', '--port', String(port)], { cwd: shop, env });
      let stderr = '';
      serve.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      await waitForLine(serve, /checkout-kit serve listening on/);
      return { serve, stderr: () => stderr };
    };

    const first = await startServe();

    // One paid checkout: created through serve, paid through the sandbox's simulation endpoint.
    const created = await postCheckout(`http://127.0.0.1:${port}`, { orderId: 'o-slow', amount: '15', email: 'buyer@example.com' });
    expect(created.status).toBe(303);
    const paymentId = createdPaymentId(created);
    const deposit = await fetch(`${sandboxUrl}/sandbox/payments/${paymentId}/deposit`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ amount: '15' }),
    });
    expect(deposit.status).toBe(200);

    // The webhook reaches serve and the slow handler starts; it runs until the release file exists.
    const started = await eventually(() => calls().find((call) => call.step === 'start'), 60_000);
    expect(started).toMatchObject({ id: paymentId, key: `payment:${paymentId}:paid`, source: 'webhook', attempt: 1 });

    // The event's own run is done (the handler's run follows it, under its own lease); after a
    // third of the handler's 30 s lease it is renewed: another process sees it reach past the
    // 30 s it was first claimed for.
    type ListedRun = { key: string; status: string; createdAt: string; leaseUntil?: string };
    const renewed = await eventually(
      async () =>
        ((await cliJson(['runs', '--json'])) as ListedRun[]).find(
          (run) => run.key === `payment:${paymentId}:paid` && run.status === 'running' && Date.parse(run.leaseUntil ?? '') - Date.parse(run.createdAt) > 35_000,
        ),
      90_000,
      500,
    );

    // While the handler still runs, other processes read the same store.
    const during = await cliJson(['payments', 'list', '--json']);
    expect(during).toEqual([expect.objectContaining({ kind: 'payment', id: paymentId, orderId: 'o-slow', outcome: 'paid' })]);
    const runsDuring = (await cliJson(['runs', '--json'])) as Array<{ key: string; status: string }>;
    expect(runsDuring).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ key: expect.stringMatching(/^event:/), status: 'done' }),
        expect.objectContaining({ key: renewed.key, status: 'running' }),
      ]),
    );
    expect(calls().map((call) => call.step)).toEqual(['start']);

    // The handler returns; its run and the event's run are done.
    await writeFile(release, '');
    await eventually(() => calls().find((call) => call.step === 'end'), 60_000, 200);
    const runsAfter = await eventually(
      async () => {
        const runs = (await cliJson(['runs', '--json'])) as Array<{ key: string; status: string }>;
        return runs.some((run) => run.status !== 'done') ? undefined : runs;
      },
      60_000,
      500,
    );
    expect(runsAfter).toEqual(
      expect.arrayContaining([expect.objectContaining({ key: expect.stringMatching(/^event:/) }), expect.objectContaining({ key: renewed.key })]),
    );
    expect(first.stderr()).not.toMatch(/lost the lease/i);

    // serve stops cleanly; the store still opens in another process.
    expect(await stopProcess(first.serve)).toBe(0);
    const afterStop = await cliJson(['payments', 'list', '--json']);
    expect(afterStop).toEqual([expect.objectContaining({ id: paymentId, outcome: 'paid', open: false })]);

    // serve starts again on the same store, and a reconcile pass beside it finds nothing to do.
    const second = await startServe();
    const health = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ ok: true });
    const reconciled = await cliJson(['reconcile', '--json', '--older-than', '0']);
    expect(reconciled).toMatchObject({ skipped: false, fulfilled: 0, retried: 0, failed: 0 });
    // Let the restarted serve pick up anything it wrongly thinks is due (due runs every 5 s, events every 1 s).
    await sleep(6_000);
    const health2 = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(health2.status).toBe(200);
    expect(second.stderr()).not.toMatch(/damaged line/);

    // Exactly one handler call, from the first serve, in total.
    const all = calls();
    expect(all.map((call) => call.step)).toEqual(['start', 'end']);
    expect(all[0]!.pid).toBe(all[1]!.pid);
  }, 240_000);
});

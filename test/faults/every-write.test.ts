import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { Op, ResourceRecord, Run } from '../../src/store/index.js';
import { samplePayment, sampleEvent } from '../../src/testing/index.js';
import { signWebhook } from '../../src/webhooks/index.js';
import { waitForLine } from '../support/cli.js';
import { eventually, freePort } from '../support/ports.js';
import { createdPaymentId, postCheckout } from '../support/post-checkout.js';
import { removeTempDirs, tempDir } from '../support/temp-dirs.js';
import { reportFigures } from './support/report.js';
import { cli, faketimeAvailable, journalOps, Processes, startServe, stop, STORE_FULFILLMENT, type Serve } from './support/store-processes.js';

// Every kind of write the embedded store journals, made by the real processes (sandbox, serve with
// a fulfillment module, retry, reconcile), one after the other on one store. After each step, other
// processes read the store (runs, payments list, events list) and serve restarts on it: a journal
// line that any reader or a restart cannot replay fails here (as `renew` once did).

const PRUNE = fileURLToPath(new URL('./support/store-prune.ts', import.meta.url));
const DAY_MS = 86_400_000;

/** The step of the sequence that makes each kind of op: a Record, so a new op kind must be placed here. */
const MADE_BY: Record<Op['t'], string> = {
  attempt: 'checkout',
  attemptDone: 'checkout',
  resource: 'checkout',
  attemptRefused: 'refused checkout',
  event: 'paid',
  claim: 'paid',
  enqueue: 'paid',
  complete: 'paid',
  dead: 'dead letter',
  renew: 'slow handler',
  fail: 'throwing handler',
  lock: 'reconcile',
  unlock: 'reconcile',
  retry: 'retry --all',
  prune: 'prune',
  // The engine's timeline of each payment (issue 15), written as serve fulfils it.
  activity: 'paid',
};

const processes = new Processes();
afterEach(() => processes.stopAll());
afterAll(async () => {
  await processes.stopAll();
  await removeTempDirs();
});

interface Readers {
  runs: Run[];
  payments: ResourceRecord[];
  events: Array<{ id: string; resourceId?: string; run?: Run }>;
}

const FAKETIME = faketimeAvailable();
if (!FAKETIME) console.log('FAULTS every-write: skipped: needs libfaketime (apt-get install faketime; .ci/setup installs it)');

describe('every kind of store write, through the real processes', () => {
  it.skipIf(!FAKETIME)(
    'leaves a store that a second process reads and a restarted serve opens, after each one',
    async () => {
      const shop = await tempDir('ck-every-shop-');
      const storeDir = await tempDir('ck-every-store-');
      const sandboxDir = await tempDir('ck-every-sandbox-');
      const log = join(shop, 'calls.jsonl');
      const release = join(shop, 'release-slow-handler');
      const port = await freePort();
      const started = performance.now();

      const sandbox = processes.start(['sandbox', '--port', '0', '--data', sandboxDir, '--webhook-url', `http://127.0.0.1:${port}/webhooks/checkout`], { cwd: sandboxDir, env: { LOG_LEVEL: 'warn' } });
      const [, sandboxUrl, credentialsPath] = await waitForLine(sandbox, /sandbox listening on (http:\/\/127\.0\.0\.1:\d+)\ncredentials: (\S+)\n/);
      const creds = JSON.parse(await readFile(credentialsPath!, 'utf8'));
      const secret = creds.webhookSecret as string;
      const env = {
        CHECKOUT_BASE_URL: sandboxUrl!,
        CHECKOUT_API_KEY: creds.test.merchant.apiKey,
        CHECKOUT_SIGNING_SECRET: creds.test.merchant.signingSecret,
        CHECKOUT_INVOICE_KEY: creds.test.merchant.invoiceKey,
        CHECKOUT_WEBHOOK_SECRET: secret,
        CHECKOUT_STORE: `file:${storeDir}`,
        CHECKOUT_HANDLERS: STORE_FULFILLMENT,
        STORE_FAULTS_LOG: log,
        // The slow handler runs until this file exists.
        STORE_FAULTS_RELEASE: release,
        LOG_LEVEL: 'warn',
      };
      const run = (args: string[]) => cli(processes, args, { cwd: shop, env });
      const json = async <T>(args: string[]): Promise<T> => {
        const result = await run(args);
        expect(result.code, `checkout-kit ${args.join(' ')} exited ${result.code}: ${result.stderr}`).toBe(0);
        return JSON.parse(result.stdout) as T;
      };
      const calls = () => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as { step: string; key: string; attempt: number }) : []);
      /** Wait until the journal holds an op matching `match`. */
      const journalHas = (match: (op: Op) => boolean, timeoutMs = 30_000) => eventually(async () => (await journalOps(storeDir)).find(match), timeoutMs, 200);

      let serve: Serve = await startServe(processes, port, { cwd: shop, env });
      const checkout = async (orderId: string, amount: string, extra: Record<string, string> = {}) =>
        postCheckout(`http://127.0.0.1:${port}`, { orderId, amount, email: 'buyer@example.com', ...extra });
      /** Create a checkout and pay it in full through the sandbox; the payment id. */
      const pay = async (orderId: string, amount: string) => {
        const created = await checkout(orderId, amount);
        expect(created.status).toBe(303);
        const id = createdPaymentId(created);
        const deposit = await fetch(`${sandboxUrl}/sandbox/payments/${id}/deposit`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ amount }) });
        expect(deposit.status).toBe(200);
        return id;
      };

      const seen = new Set<Op['t']>();
      const figures = { steps: 0, readerRuns: 0, restarts: 0 };
      /**
       * Run one step; check it appended the ops it is there for (and no line any reader rejects);
       * read the store from other processes while serve runs; restart serve on it.
       */
      async function step(name: string, action: () => Promise<void>, verify: (readers: Readers) => void | Promise<void> = () => undefined) {
        const before = (await journalOps(storeDir)).length;
        await action();
        const added = (await journalOps(storeDir)).slice(before);
        for (const op of added) seen.add(op.t);
        const due = (Object.keys(MADE_BY) as Array<Op['t']>).filter((t) => MADE_BY[t] === name);
        expect(
          due.filter((t) => !added.some((op) => op.t === t)),
          `step "${name}" appended ${added.map((op) => op.t).join(', ')}`,
        ).toEqual([]);
        const [runs, payments, events] = await Promise.all([json<Run[]>(['runs', '--json']), json<ResourceRecord[]>(['payments', 'list', '--json']), json<Readers['events']>(['events', 'list', '--json', '--limit', '1000'])]);
        figures.readerRuns += 3;
        await verify({ runs, payments, events });
        expect(await stop(serve.child), `serve exited badly after "${name}": ${serve.stderr()}`).toBe(0);
        expect(serve.stderr()).not.toMatch(/damaged line|Cannot read the store/);
        serve = await startServe(processes, port, { cwd: shop, env });
        expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
        figures.restarts += 1;
        figures.steps += 1;
      }

      // Checkout attempt put + done, and the payment recorded for reconcile.
      let paidId = '';
      await step(
        'checkout',
        async () => {
          const created = await checkout('o-paid', '10');
          expect(created.status).toBe(303);
          paidId = createdPaymentId(created);
        },
        ({ payments }) => expect(payments).toEqual([expect.objectContaining({ id: paidId, orderId: 'o-paid', outcome: 'pending', open: true })]),
      );

      // A create the service refuses releases the attempt.
      await step(
        'refused checkout',
        async () => expect((await checkout('o-refused', '5', { token: 'DOGE' })).status).toBe(422),
        ({ payments }) => expect(payments.map((p) => p.orderId)).toEqual(['o-paid']),
      );

      // The sandbox's signed webhook: event stored, dispatched (claim, complete), the payment
      // confirmed (resource), its handler run queued (enqueue), claimed and completed.
      await step(
        'paid',
        async () => {
          const deposit = await fetch(`${sandboxUrl}/sandbox/payments/${paidId}/deposit`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ amount: '10' }) });
          expect(deposit.status).toBe(200);
          await journalHas((op) => op.t === 'complete' && op.key === `payment:${paidId}:paid`);
          await eventually(async () => ((await json<Run[]>(['runs', '--json'])).every((r) => r.status === 'done') ? true : undefined), 20_000, 300);
        },
        ({ runs, payments, events }) => {
          expect(payments).toEqual(expect.arrayContaining([expect.objectContaining({ id: paidId, outcome: 'paid', open: false })]));
          expect(runs).toEqual(expect.arrayContaining([expect.objectContaining({ key: `payment:${paidId}:paid`, status: 'done', attempts: 1 })]));
          expect(events.filter((e) => e.resourceId === paidId).length).toBeGreaterThan(0);
        },
      );

      // A verified delivery that is not JSON: kept as a dead letter.
      await step(
        'dead letter',
        async () => {
          const body = '{"id": "evt_broken", "type": "payment.paid", ';
          const response = await fetch(`http://127.0.0.1:${port}/webhooks/checkout`, { method: 'POST', headers: { 'content-type': 'application/json', ...signWebhook({ id: 'evt_broken', body, secret }) }, body });
          expect(response.status).toBe(400);
          const letters = await json<Array<{ reason: string }>>(['events', 'dead-letters', '--json']);
          expect(letters).toEqual([expect.objectContaining({ reason: expect.stringMatching(/JSON/i) })]);
        },
      );

      // A handler running past a third of the 30 s dispatch lease: the event's lease is renewed.
      let slowId = '';
      await step(
        'slow handler',
        async () => {
          slowId = await pay('o-slow', '11');
          const renewed = await journalHas((op) => op.t === 'renew' && op.key.startsWith('event:'), 60_000);
          // Read while the handler still runs (it waits for the release file), after the renewal.
          const during = await json<Run[]>(['runs', '--json']);
          expect(during).toEqual(expect.arrayContaining([expect.objectContaining({ key: (renewed as { key: string }).key, status: 'running' })]));
          expect(calls().filter((c) => c.key === `payment:${slowId}:paid`).map((c) => c.step)).toEqual(['start']);
          await writeFile(release, '');
          await journalHas((op) => op.t === 'complete' && op.key === `payment:${slowId}:paid`, 60_000);
        },
        ({ runs }) => expect(runs).toEqual(expect.arrayContaining([expect.objectContaining({ key: `payment:${slowId}:paid`, status: 'done' })])),
      );

      // A handler that throws once: fail with a retry time, then serve's due-run sweep runs it again.
      let flakyId = '';
      await step(
        'throwing handler',
        async () => {
          flakyId = await pay('o-flaky', '13');
          const failed = await journalHas((op) => op.t === 'fail' && op.key === `payment:${flakyId}:paid`);
          expect(failed).toMatchObject({ retryAt: expect.any(String), error: expect.stringMatching(/on purpose/) });
          await journalHas((op) => op.t === 'complete' && op.key === `payment:${flakyId}:paid`, 30_000);
        },
        ({ runs }) => expect(runs).toEqual(expect.arrayContaining([expect.objectContaining({ key: `payment:${flakyId}:paid`, status: 'done', attempts: 2 })])),
      );

      // reconcile beside serve: its lock and unlock.
      await step('reconcile', async () => {
        const summary = await json<{ skipped: boolean; failed: number }>(['reconcile', '--json', '--older-than', '0']);
        expect(summary).toMatchObject({ skipped: false, failed: 0 });
      });

      // Fail for good: an event whose payment the service does not know fails every dispatch; serve
      // runs with its clock 30 times as fast (faketime) so its 8 attempts (1 s doubling) take
      // seconds. Nothing else uses the store meanwhile: that clock would take other processes'
      // store locks for stale.
      const doomed = `evt_${randomUUID()}`;
      await step(
        'fail for good',
        async () => {
          expect(await stop(serve.child)).toBe(0);
          const fast = await startServe(processes, port, { cwd: shop, env, faketime: '+0 x30' });
          // Signed on serve's own (fast) clock, read from its Date header.
          const fastNow = Math.floor(Date.parse((await fetch(`http://127.0.0.1:${port}/healthz`)).headers.get('date')!) / 1000);
          const body = JSON.stringify({ ...sampleEvent('payment.created', samplePayment()), id: doomed });
          const response = await fetch(`http://127.0.0.1:${port}/webhooks/checkout`, { method: 'POST', headers: { 'content-type': 'application/json', ...signWebhook({ id: doomed, body, secret, timestamp: fastNow }) }, body });
          expect(response.status).toBe(200);
          await journalHas((op) => op.t === 'fail' && op.key === `event:${doomed}` && op.retryAt === undefined, 60_000);
          expect(await stop(fast.child)).toBe(0);
          serve = await startServe(processes, port, { cwd: shop, env });
        },
        ({ runs }) => expect(runs).toEqual(expect.arrayContaining([expect.objectContaining({ key: `event:${doomed}`, status: 'failed', attempts: 8 })])),
      );

      // checkout-kit retry puts it back in line.
      await step(
        'retry --all',
        async () => expect(await json(['retry', '--all', '--json'])).toEqual({ retried: 1 }),
        ({ runs }) => expect(runs.find((r) => r.key === `event:${doomed}`)?.status).not.toBe('failed'),
      );

      // Retention: what serve's receiver does hourly, run once with its clock a month ahead.
      await step(
        'prune',
        async () => {
          const pruned = await cli(processes, [], { cwd: shop, env: { ...env, STORE_PRUNE_AHEAD_MS: String(31 * DAY_MS) }, script: PRUNE });
          expect(pruned.code, pruned.stderr).toBe(0);
          // Every finished event loses its payload (its id stays, for dedupe).
          expect(JSON.parse(pruned.stdout)).toMatchObject({ payloadsPruned: expect.any(Number), eventsForgotten: 0 });
          expect(JSON.parse(pruned.stdout).payloadsPruned).toBeGreaterThan(0);
        },
        async ({ events }) => {
          const paidEvent = events.find((e) => e.resourceId === paidId)!;
          const shown = await json<{ event: { body?: string } }>(['events', 'show', paidEvent.id, '--json']);
          expect(shown.event.body).toBeUndefined();
        },
      );

      expect([...seen].sort()).toEqual(Object.keys(MADE_BY).sort());
      // Handlers ran once per payment and outcome across every restart (the throwing one twice, as designed).
      const byKey = (id: string) => calls().filter((c) => c.key === `payment:${id}:paid` && c.step !== 'start').map((c) => `${c.step}#${c.attempt}`);
      expect({ paid: byKey(paidId), slow: byKey(slowId), flaky: byKey(flakyId) }).toEqual({ paid: ['end#1'], slow: ['end#1'], flaky: ['throw#1', 'end#2'] });
      const check = await run(['store', 'check', '--json']);
      expect(check.code).toBe(0);
      expect(JSON.parse(check.stdout)).toMatchObject({ status: 'healthy', opens: true });
      reportFigures('every-write', { opKinds: seen.size, opKindsTotal: Object.keys(MADE_BY).length, ...figures, seconds: Math.round((performance.now() - started) / 1000) });
    },
    600_000,
  );
});

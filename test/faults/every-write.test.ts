import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { DeadLetter, ResourceRecord, Run, Store, TenantMerchant } from '../../src/store/index.js';
import { samplePayment, sampleEvent } from '../../src/testing/index.js';
import { signWebhook } from '../../src/webhooks/index.js';
import { waitForLine } from '../support/cli.js';
import { eventually, freePort } from '../support/ports.js';
import { createdPaymentId, postCheckout } from '../support/post-checkout.js';
import { removeTempDirs, tempDir } from '../support/temp-dirs.js';
import { reportFigures } from './support/report.js';
import type { StoreCall } from './support/store-calls.js';
import { cli, faketimeAvailable, Processes, startServe, stop, STORE_FULFILLMENT, type Serve } from './support/store-processes.js';

// Every kind of write the store makes, made by the real processes (sandbox, serve with a
// fulfillment module, retry, reconcile, the receiver's retention), one after the other on one
// embedded store. After each step a second process reads what it wrote (runs, payments list,
// events list, dead letters), and serve restarts on the store and shows the same through its
// console (runs, payments, events, dead letters, a payment's timeline): a write that another
// process or a restart cannot read back fails here (as a journal line of `renew` once did).
//
// Which writes each step made is recorded in the processes themselves: support/store-calls.ts,
// preloaded into every CLI process, logs each Store write method call once it has settled.
//
// Checked to fail on a copy of the repo: with the lease renewal a no-op (execute-run.ts,
// keepRenewing's renew), the "slow handler" step fails: no reader ever sees a renewed lease.

const PRUNE = fileURLToPath(new URL('./support/store-prune.ts', import.meta.url));
const STORE_CALLS = fileURLToPath(new URL('./support/store-calls.ts', import.meta.url));
const DAY_MS = 86_400_000;

type Step =
  | 'checkout'
  | 'refused checkout'
  | 'onboard'
  | 'refused onboard'
  | 'credentials'
  | 'rekey'
  | 'forget credentials'
  | 'paid'
  | 'dead letter'
  | 'slow handler'
  | 'throwing handler'
  | 'reconcile'
  | 'fail for good'
  | 'retry --all'
  | 'prune';

/** Every method of the Store seam. */
type StoreMethod = { [K in keyof Store]: Store[K] extends (...args: never[]) => unknown ? K : never }[keyof Store];
/** The Store's methods that write nothing (and its lifecycle): every other method is a write. */
const _READS = [
  'open',
  'close',
  'getEvent',
  'listEvents',
  'listDeadLetters',
  'getRun',
  'listRuns',
  'countRuns',
  'getResource',
  'listResources',
  'searchResources',
  'getCheckoutAttempt',
  'getTenantMerchant',
  'findTenantByMerchantId',
  'listTenantMerchants',
  'getTenantCredentials',
  'listTenantCredentials',
  'listActivity',
  'summarize',
] as const satisfies readonly StoreMethod[];
type WriteMethod = Exclude<StoreMethod, (typeof _READS)[number]>;

/**
 * The step of the sequence that must make each write. A Record over the Store's write methods: a
 * method added to Store does not compile until it is placed here (or named a read above).
 */
const MADE_BY: Record<WriteMethod, Step | 'no process'> = {
  putCheckoutAttempt: 'checkout',
  completeCheckoutAttempt: 'checkout',
  updateResource: 'checkout',
  releaseCheckoutAttempt: 'refused checkout',
  putTenantMerchant: 'onboard',
  completeTenantMerchant: 'onboard',
  releaseTenantMerchant: 'refused onboard',
  putTenantCredentials: 'credentials',
  resealTenantCredentials: 'rekey',
  deleteTenantCredentials: 'forget credentials',
  insertEvent: 'paid',
  // The toolkit's processes queue each run with what brings it (the event with `insertEvent`, a
  // handler run with its outcome through `updateResource`'s queue); enqueueRun is for runs of one's own.
  enqueueRun: 'no process',
  claimRun: 'paid',
  completeRun: 'paid',
  // The engine's timeline of each payment, written as serve fulfils it.
  appendActivity: 'paid',
  insertDeadLetter: 'dead letter',
  renewLease: 'slow handler',
  failRun: 'throwing handler',
  acquireLock: 'reconcile',
  releaseLock: 'reconcile',
  retryRun: 'retry --all',
  prune: 'prune',
};
const WRITES = (Object.keys(MADE_BY) as WriteMethod[]).filter((method) => MADE_BY[method] !== 'no process');

const processes = new Processes();
afterEach(() => processes.stopAll());
afterAll(async () => {
  await processes.stopAll();
  await removeTempDirs();
});

/** What a second process reads with the CLI's read commands. */
interface Readers {
  runs: Run[];
  payments: ResourceRecord[];
  events: Array<{ id: string; resourceId?: string; run?: Run }>;
  deadLetters: DeadLetter[];
  merchants: TenantMerchant[];
}

/** What a restarted serve shows of the store in its console. */
interface Shown {
  runs: Set<string>;
  payments: Set<string>;
  events: Set<string>;
  deadLetters: Set<string>;
  /** Tenants on the merchants page. */
  merchants: Set<string>;
  /** Entries of each payment's timeline, by payment id. */
  timeline: Map<string, number>;
}

const attributes = (html: string, name: string) => new Set([...html.matchAll(new RegExp(`<tr ${name}="([^"]+)"`, 'g'))].map((match) => match[1]!));

const FAKETIME = faketimeAvailable();
if (!FAKETIME) console.log('FAULTS every-write: skipped: needs libfaketime (apt-get install faketime; .ci/setup installs it)');

describe('every kind of store write, through the real processes', () => {
  it.skipIf(!FAKETIME)(
    'is read back by a second process and by a restarted serve, after each one',
    async () => {
      const shop = await tempDir('ck-every-shop-');
      const storeDir = await tempDir('ck-every-store-');
      const sandboxDir = await tempDir('ck-every-sandbox-');
      const log = join(shop, 'calls.jsonl');
      const storeCalls = join(shop, 'store-calls.jsonl');
      const release = join(shop, 'release-slow-handler');
      const port = await freePort();
      const started = performance.now();

      const sandbox = processes.start(['sandbox', '--port', '0', '--data', sandboxDir, '--webhook-url', `http://127.0.0.1:${port}/webhooks/checkout`], {
        cwd: sandboxDir,
        env: { LOG_LEVEL: 'warn' },
      });
      const [, sandboxUrl, credentialsPath] = await waitForLine(sandbox, /sandbox listening on (http:\/\/127\.0\.0\.1:\d+)\ncredentials: (\S+)\n/);
      const creds = JSON.parse(await readFile(credentialsPath!, 'utf8'));
      const secret = creds.webhookSecret as string;
      const env: Record<string, string> = {
        CHECKOUT_BASE_URL: sandboxUrl!,
        CHECKOUT_API_KEY: creds.test.merchant.apiKey,
        CHECKOUT_SIGNING_SECRET: creds.test.merchant.signingSecret,
        CHECKOUT_INVOICE_KEY: creds.test.merchant.invoiceKey,
        CHECKOUT_WEBHOOK_SECRET: secret,
        CHECKOUT_PARTNER_API_KEY: creds.test.partner.apiKey,
        CHECKOUT_PARTNER_SIGNING_SECRET: creds.test.partner.signingSecret,
        CHECKOUT_STORE: `file:${storeDir}`,
        CHECKOUT_HANDLERS: STORE_FULFILLMENT,
        STORE_FAULTS_LOG: log,
        // The slow handler runs until this file exists.
        STORE_FAULTS_RELEASE: release,
        STORE_CALLS_LOG: storeCalls,
        STORE_CALLS_METHODS: WRITES.join(','),
        // Handler runs leased for 30 s, so that the slow handler's lease is renewed 10 s in.
        CHECKOUT_HANDLER_LEASE: '30',
        LOG_LEVEL: 'warn',
      };
      const preload = [STORE_CALLS];
      const run = (args: string[]) => cli(processes, args, { cwd: shop, env, preload });
      const json = async <T>(args: string[]): Promise<T> => {
        const result = await run(args);
        expect(result.code, `checkout-kit ${args.join(' ')} exited ${result.code}: ${result.stderr}`).toBe(0);
        return JSON.parse(result.stdout) as T;
      };
      const runs = () => json<Run[]>(['runs', '--json']);
      /** Poll `runs --json` (a second process) until a run matches. */
      const runsHave = (match: (run: Run) => boolean, timeoutMs = 30_000) => eventually(async () => (await runs()).find(match), timeoutMs, 300);
      const lines = <T>(file: string) =>
        existsSync(file)
          ? readFileSync(file, 'utf8')
              .split('\n')
              .filter(Boolean)
              .map((line) => JSON.parse(line) as T)
          : [];
      const calls = () => lines<{ step: string; key: string; attempt: number }>(log);
      const writes = () => lines<StoreCall>(storeCalls);
      const restart = async (faketime?: string) => {
        serve = await startServe(processes, port, { cwd: shop, env, preload, faketime, args: ['--console'] });
      };

      let serve: Serve = await startServe(processes, port, { cwd: shop, env, preload, args: ['--console'] });
      const checkout = async (orderId: string, amount: string, extra: Record<string, string> = {}) =>
        postCheckout(`http://127.0.0.1:${port}`, { orderId, amount, email: 'buyer@example.com', ...extra });
      /** Create a checkout and pay it in full through the sandbox; the payment id. */
      const pay = async (orderId: string, amount: string) => {
        const created = await checkout(orderId, amount);
        expect(created.status).toBe(303);
        const id = createdPaymentId(created);
        const deposit = await fetch(`${sandboxUrl}/sandbox/payments/${id}/deposit`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ amount }),
        });
        expect(deposit.status).toBe(200);
        return id;
      };
      /** What the running serve's console shows. */
      const consoleView = async (paymentIds: string[]): Promise<Shown> => {
        const page = async (path: string) => {
          const response = await fetch(`http://127.0.0.1:${port}/checkout-kit${path}`);
          expect(response.status, path).toBe(200);
          return response.text();
        };
        const timeline = new Map<string, number>();
        for (const id of paymentIds) timeline.set(id, (await page(`/payments/${encodeURIComponent(id)}`)).match(/<tr data-kind="/g)?.length ?? 0);
        return {
          runs: attributes(await page('/runs'), 'data-key'),
          payments: attributes(await page('/payments'), 'data-id'),
          events: attributes(await page('/events'), 'data-id'),
          deadLetters: attributes(await page('/dead-letters'), 'data-id'),
          merchants: attributes(await page('/merchants'), 'data-tenant'),
          timeline,
        };
      };

      const seen = new Set<WriteMethod>();
      const figures = { steps: 0, writeCalls: 0, readerRuns: 0, restarts: 0, consolePagesRead: 0 };
      let paidId = '';
      /**
       * Run one step; check that it made the writes it is there for and that no write failed; read
       * the store from a second process while serve runs; restart serve and read the same through
       * the restarted serve's console.
       */
      async function step(name: Step, action: () => Promise<void>, verify: (readers: Readers) => void | Promise<void> = () => undefined) {
        const before = writes().length;
        await action();
        const due = WRITES.filter((method) => MADE_BY[method] === name);
        // A call is logged as it settles, a moment after what it wrote became visible.
        const made = await eventually(
          () => {
            const added = writes().slice(before);
            return due.every((method) => added.some((call) => call.method === method && call.ok)) ? added : undefined;
          },
          10_000,
          100,
        ).catch(() => writes().slice(before));
        for (const call of made) if (call.ok) seen.add(call.method as WriteMethod);
        figures.writeCalls += made.length;
        expect(
          due.filter((method) => !made.some((call) => call.method === method && call.ok)),
          `step "${name}" made ${[...new Set(made.map((call) => call.method))].join(', ')}`,
        ).toEqual([]);
        expect(
          made.filter((call) => !call.ok),
          `step "${name}": writes that failed`,
        ).toEqual([]);

        const [runList, payments, events, deadLetters, merchants] = await Promise.all([
          runs(),
          json<ResourceRecord[]>(['payments', 'list', '--json']),
          json<Readers['events']>(['events', 'list', '--json', '--limit', '1000']),
          json<DeadLetter[]>(['events', 'dead-letters', '--json']),
          json<TenantMerchant[]>(['merchants', 'list', '--json']),
        ]);
        figures.readerRuns += 5;
        await verify({ runs: runList, payments, events, deadLetters, merchants });

        expect(await stop(serve.child), `serve exited badly after "${name}": ${serve.stderr()}`).toBe(0);
        expect(serve.stderr()).not.toMatch(/damaged|malformed|SQLITE_/);
        await restart();
        expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
        figures.restarts += 1;
        // Everything the second process read, the restarted serve reads too.
        const shown = await consoleView(paidId ? [paidId] : []);
        expect(shown.merchants, `tenants the restarted serve does not show after "${name}"`).toEqual(new Set(merchants.map((m) => m.tenantId)));
        figures.consolePagesRead += 4 + shown.timeline.size;
        expect(
          [...runList.map((r) => r.key)].filter((key) => !shown.runs.has(key)),
          `runs the restarted serve does not show after "${name}"`,
        ).toEqual([]);
        expect(
          [...payments.map((p) => p.id)].filter((id) => !shown.payments.has(id)),
          `payments the restarted serve does not show after "${name}"`,
        ).toEqual([]);
        expect(
          [...events.map((e) => e.id)].filter((id) => !shown.events.has(id)),
          `events the restarted serve does not show after "${name}"`,
        ).toEqual([]);
        expect(
          [...deadLetters.map((d) => d.id)].filter((id) => !shown.deadLetters.has(id)),
          `dead letters the restarted serve does not show after "${name}"`,
        ).toEqual([]);
        if (seen.has('appendActivity') && paidId) expect(shown.timeline.get(paidId), `the paid payment's timeline after "${name}"`).toBeGreaterThan(0);
        figures.steps += 1;
      }

      // Checkout attempt put + done, and the payment recorded for reconcile.
      let checkoutUrl = '';
      await step(
        'checkout',
        async () => {
          const created = await checkout('o-paid', '10');
          expect(created.status).toBe(303);
          paidId = createdPaymentId(created);
          checkoutUrl = created.headers.get('location')!;
        },
        ({ payments }) => expect(payments).toEqual([expect.objectContaining({ id: paidId, orderId: 'o-paid', outcome: 'pending', open: true })]),
      );
      // The completed attempt, read back by the restarted serve: the same order gets the same payment.
      const again = await checkout('o-paid', '10');
      expect({ status: again.status, location: again.headers.get('location') }).toEqual({ status: 303, location: checkoutUrl });

      // A create the service refuses releases the attempt.
      await step(
        'refused checkout',
        async () => expect((await checkout('o-refused', '5', { token: 'DOGE' })).status).toBe(422),
        ({ payments }) => expect(payments.map((p) => p.orderId)).toEqual(['o-paid']),
      );
      // The release, read back by the restarted serve: the order may now be sent with another body.
      const retried = await checkout('o-refused', '5');
      expect(retried.status).toBe(303);
      const refusedThenPaidId = createdPaymentId(retried);

      // A partner's tenant onboarded (its try put, then completed with the merchant); a refused
      // onboarding (the sandbox refuses an address under .invalid) releases its try.
      await step(
        'onboard',
        async () =>
          expect(await json(['merchants', 'onboard', '--tenant', 'tenant-1', '--name', 'Tenant One', '--email', 'one@example.com', '--json'])).toMatchObject({
            status: 'created',
          }),
        ({ merchants }) => expect(merchants).toEqual([expect.objectContaining({ tenantId: 'tenant-1', status: 'created', merchantId: expect.any(String) })]),
      );
      await step(
        'refused onboard',
        async () =>
          expect((await run(['merchants', 'onboard', '--tenant', 'tenant-2', '--name', 'Tenant Two', '--email', 'two@example.invalid'])).code).toBe(1),
        ({ merchants }) => expect(merchants.map((m) => `${m.tenantId}:${m.status}`)).toEqual(['tenant-1:created', 'tenant-2:refused']),
      );
      // The release, read back: the corrected address is sent under the tenant's next key.
      expect(await json(['merchants', 'onboard', '--tenant', 'tenant-2', '--name', 'Tenant Two', '--email', 'two@example.com', '--json'])).toMatchObject({
        status: 'created',
        number: 2,
      });

      // A tenant's own keys (issued by the sandbox, as the service's dashboard would), stored sealed;
      // re-sealed under a new key put first in CHECKOUT_SECRETS_KEY; then forgotten.
      const tenantOne = await json<Array<TenantMerchant & { credentials: { keyId: string } | null }>>(['merchants', 'show', 'tenant-1', '--json']);
      const ownKeys = await (await fetch(`${sandboxUrl}/sandbox/merchants/${tenantOne[0]!.merchantId}/keys`, { method: 'POST' })).json();
      const keysFile = join(shop, 'tenant-1-keys.json');
      await writeFile(keysFile, JSON.stringify({ apiKey: ownKeys.apiKey, signingSecret: ownKeys.signingSecret }));
      const [firstKey, secondKey] = [randomBytes(32).toString('base64'), randomBytes(32).toString('base64')];
      const keyIdOf = async () =>
        (await json<Array<{ credentials: { keyId: string } | null }>>(['merchants', 'show', 'tenant-1', '--json']))[0]!.credentials?.keyId;
      env.CHECKOUT_SECRETS_KEY = firstKey;
      let sealedWith: string | undefined;
      await step(
        'credentials',
        async () => expect((await run(['merchants', 'credentials', '--tenant', 'tenant-1', '--from-file', keysFile])).code).toBe(0),
        async () => {
          sealedWith = await keyIdOf();
          expect(sealedWith).toMatch(/^[0-9a-f]{8}$/);
        },
      );
      env.CHECKOUT_SECRETS_KEY = `${secondKey},${firstKey}`;
      await step(
        'rekey',
        async () => expect((await run(['merchants', 'rekey'])).stdout).toMatch(/^re-sealed 1 tenants' credentials/),
        async () => {
          expect(await keyIdOf()).not.toBe(sealedWith);
        },
      );
      await step(
        'forget credentials',
        async () => expect((await run(['merchants', 'credentials', '--tenant', 'tenant-1', '--clear'])).code).toBe(0),
        async () => {
          expect(await keyIdOf()).toBeUndefined();
        },
      );
      delete env.CHECKOUT_SECRETS_KEY;

      // The sandbox's signed webhook: event stored, dispatched (claim, complete), the payment
      // confirmed (resource), its handler run queued (enqueue), claimed and completed, its timeline kept.
      await step(
        'paid',
        async () => {
          const deposit = await fetch(`${sandboxUrl}/sandbox/payments/${paidId}/deposit`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ amount: '10' }),
          });
          expect(deposit.status).toBe(200);
          await runsHave((r) => r.key === `payment:${paidId}:paid` && r.status === 'done');
          await eventually(async () => ((await runs()).every((r) => r.status === 'done') ? true : undefined), 20_000, 300);
        },
        ({ runs: list, payments, events }) => {
          expect(payments).toEqual(expect.arrayContaining([expect.objectContaining({ id: paidId, outcome: 'paid', open: false })]));
          expect(list).toEqual(expect.arrayContaining([expect.objectContaining({ key: `payment:${paidId}:paid`, status: 'done', attempts: 1 })]));
          expect(events.filter((e) => e.resourceId === paidId && e.run?.status === 'done').length).toBeGreaterThan(0);
        },
      );

      // A verified delivery that is not JSON: kept as a dead letter.
      await step(
        'dead letter',
        async () => {
          const body = '{"id": "evt_broken", "type": "payment.paid", ';
          const response = await fetch(`http://127.0.0.1:${port}/webhooks/checkout`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', ...signWebhook({ id: 'evt_broken', body, secret }) },
            body,
          });
          expect(response.status).toBe(400);
        },
        ({ deadLetters }) =>
          expect(deadLetters).toEqual([
            expect.objectContaining({ reason: expect.stringMatching(/JSON/i), body: '{"id": "evt_broken", "type": "payment.paid", ' }),
          ]),
      );

      // A handler running past a third of its run's 30 s lease: the lease is renewed, and a second
      // process reads the renewed lease while the handler still runs.
      let slowId = '';
      await step(
        'slow handler',
        async () => {
          slowId = await pay('o-slow', '11');
          // Claimed for 30 s once its event's run is done; renewed 10 s in, to 30 s from then. The
          // handler runs until the release file exists, so the renewed lease is read while it surely runs.
          const key = `payment:${slowId}:paid`;
          const renewed = await runsHave(
            (r) => r.key === key && r.status === 'running' && r.attempts === 1 && Date.parse(r.leaseUntil!) - Date.parse(r.createdAt) > 35_000,
            60_000,
          );
          expect(writes().filter((call) => call.method === 'renewLease' && call.subject === renewed.key && call.ok).length).toBeGreaterThan(0);
          await writeFile(release, '');
          await runsHave((r) => r.key === key && r.status === 'done', 60_000);
        },
        ({ runs: list }) =>
          expect(list).toEqual(expect.arrayContaining([expect.objectContaining({ key: `payment:${slowId}:paid`, status: 'done', attempts: 1 })])),
      );

      // A handler that throws once: fail with a retry time, then serve's run loop runs it again.
      let flakyId = '';
      await step(
        'throwing handler',
        async () => {
          flakyId = await pay('o-flaky', '13');
          await runsHave((r) => r.key === `payment:${flakyId}:paid` && r.status === 'done', 30_000);
          expect(writes().filter((call) => call.method === 'failRun' && call.subject === `payment:${flakyId}:paid` && call.ok)).toHaveLength(1);
        },
        ({ runs: list }) =>
          expect(list).toEqual(expect.arrayContaining([expect.objectContaining({ key: `payment:${flakyId}:paid`, status: 'done', attempts: 2 })])),
      );

      // reconcile beside serve: its lock, taken and given back (the second pass, another process,
      // takes it again), and each pass in the reconcile log the console shows.
      await step('reconcile', async () => {
        for (let pass = 0; pass < 2; pass++) expect(await json(['reconcile', '--json', '--older-than', '0'])).toMatchObject({ skipped: false, failed: 0 });
      });
      const passes = await (await fetch(`http://127.0.0.1:${port}/checkout-kit/log?subject=reconcile`)).text();
      expect(passes.match(/<tr><td class="when">/g)?.length ?? 0).toBeGreaterThanOrEqual(2);

      // Fail for good: an event whose payment the service does not know fails every dispatch; serve
      // runs with its clock 30 times as fast (faketime) so its 8 attempts (1 s doubling) take seconds.
      const doomed = `evt_${randomUUID()}`;
      await step(
        'fail for good',
        async () => {
          expect(await stop(serve.child)).toBe(0);
          await restart('+0 x30');
          // Signed on serve's own (fast) clock, read from its Date header.
          const fastNow = Math.floor(Date.parse((await fetch(`http://127.0.0.1:${port}/healthz`)).headers.get('date')!) / 1000);
          const body = JSON.stringify({ ...sampleEvent('payment.created', samplePayment()), id: doomed });
          const response = await fetch(`http://127.0.0.1:${port}/webhooks/checkout`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', ...signWebhook({ id: doomed, body, secret, timestamp: fastNow }) },
            body,
          });
          expect(response.status).toBe(200);
          await runsHave((r) => r.key === `event:${doomed}` && r.status === 'failed', 60_000);
          expect(await stop(serve.child)).toBe(0);
          await restart();
        },
        ({ runs: list }) =>
          expect(list).toEqual(
            expect.arrayContaining([expect.objectContaining({ key: `event:${doomed}`, status: 'failed', attempts: 8, lastError: expect.any(String) })]),
          ),
      );

      // checkout-kit retry puts it back in line.
      await step(
        'retry --all',
        async () => expect(await json(['retry', '--all', '--json'])).toEqual({ retried: 1 }),
        ({ runs: list }) => expect(list.find((r) => r.key === `event:${doomed}`)?.status).not.toBe('failed'),
      );

      // Retention: what serve's receiver does hourly, run once with its clock a month ahead.
      await step(
        'prune',
        async () => {
          const pruned = await cli(processes, [], { cwd: shop, env: { ...env, STORE_PRUNE_AHEAD_MS: String(31 * DAY_MS) }, script: PRUNE, preload });
          expect(pruned.code, pruned.stderr).toBe(0);
          // Every finished event loses its payload (its id stays, for dedupe).
          expect(JSON.parse(pruned.stdout)).toMatchObject({ payloadsPruned: expect.any(Number), eventsForgotten: 0 });
          expect(JSON.parse(pruned.stdout).payloadsPruned).toBeGreaterThan(0);
        },
        async ({ events }) => {
          const paidEvent = events.find((e) => e.resourceId === paidId)!;
          const shown = await json<{ event: { id: string; body?: string } }>(['events', 'show', paidEvent.id, '--json']);
          expect(shown.event).toMatchObject({ id: paidEvent.id });
          expect(shown.event.body).toBeUndefined();
        },
      );

      expect([...seen].sort()).toEqual([...WRITES].sort());
      // Handlers ran once per payment and outcome across every restart (the throwing one twice, as designed).
      const byKey = (id: string) =>
        calls()
          .filter((c) => c.key === `payment:${id}:paid` && c.step !== 'start')
          .map((c) => `${c.step}#${c.attempt}`);
      expect({ paid: byKey(paidId), slow: byKey(slowId), flaky: byKey(flakyId), unpaid: byKey(refusedThenPaidId) }).toEqual({
        paid: ['end#1'],
        slow: ['end#1'],
        flaky: ['throw#1', 'end#2'],
        unpaid: [],
      });
      expect(writes().filter((call) => !call.ok)).toEqual([]);
      const check = await run(['store', 'check', '--json']);
      expect(check.code, check.stderr).toBe(0);
      expect(JSON.parse(check.stdout)).toMatchObject({ status: 'healthy', problems: [] });
      reportFigures('every-write', {
        writeMethods: seen.size,
        writeMethodsTotal: WRITES.length,
        ...figures,
        seconds: Math.round((performance.now() - started) / 1000),
      });
    },
    600_000,
  );
});

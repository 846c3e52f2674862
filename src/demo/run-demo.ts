import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCheckout } from '../checkout/index.js';
import { CheckoutClient } from '../client/index.js';
import { loadFastify } from '../fastify/load-fastify.js';
import { attachFulfillment, FulfillmentEngine, type FulfillmentHandler } from '../fulfillment/index.js';
import { silentLogger, type Logger } from '../log/index.js';
import { ExactDecimal } from '../money/index.js';
import { reconcile, type ReconcileSummary } from '../reconcile/index.js';
import { startSandbox, type WebhookFaults } from '../sandbox/index.js';
import { loadDriver } from '../store/sqlite/driver.js';
import { SqliteStore } from '../store/sqlite/sqlite-store.js';
import type { NewsSource } from '../store/index.js';
import { checkoutWebhooks, createReceiver, type WebhookEndpoint, type WebhookReceiver } from '../webhooks/index.js';
import { DEMO_SCENARIOS, EXPECTED, SCENARIO_STEPS, type DemoScenario } from './scenarios.js';

export interface DemoOptions {
  /** Orders to create, cycling through the scenarios. @default 12 */
  orders?: number;
  /** Webhook faults of the sandbox. @default { drop: 0.3, duplicate: 0.3, reorder: true } */
  faults?: WebhookFaults;
  /** Folder for the sandbox's and the receiver's data. @default a temp folder, removed at the end */
  dataDir?: string;
  /** Progress lines (human). @default none */
  onLine?: (line: string) => void;
  logger?: Logger;
}

export interface DemoRow {
  orderId: string;
  scenario: DemoScenario;
  paymentId: string;
  amount: string;
  outcome: string;
  expected: string;
  /** How the final outcome first arrived: webhook, reconcile or return. */
  learnedBy: NewsSource | undefined;
  /** Handler calls per outcome, e.g. { paid: 1 }. */
  calls: Record<string, number>;
  /** The paid/overpaid handler was told the money came after expiry. */
  late: boolean;
  ok: boolean;
}

export interface DemoResult {
  rows: DemoRow[];
  reconcile: ReconcileSummary;
  webhooks: { emitted: number; attempts: number; dropped: number; duplicated: number };
  ok: boolean;
  seconds: number;
}

/** A webhook endpoint whose receiver is set once the sandbox (and so the secret) exists. */
function lateEndpoint(): WebhookEndpoint & { target?: WebhookReceiver } {
  const endpoint: WebhookEndpoint & { target?: WebhookReceiver } = {
    maxBodyBytes: 65_536,
    handle: (input) => {
      if (!endpoint.target) return Promise.resolve({ status: 503, body: { error: { code: 'starting', message: 'receiver is starting' } } });
      return endpoint.target.handle(input);
    },
  };
  return endpoint;
}

/**
 * The whole story on embedded defaults: a sandbox that drops, duplicates and reorders webhooks; a
 * receiver with a fulfillment module; orders created through the checkout helper; payments in
 * every scenario; one reconcile pass; and, per order, the outcome, how the news arrived and how
 * many times each handler ran (once).
 */
export async function runDemo(options: DemoOptions = {}): Promise<DemoResult> {
  const started = Date.now();
  // Before anything is made or listens: without fastify, or without SQLite (Node 20 with no
  // better-sqlite3), the demo stops with its one-line error instead of leaving servers running.
  const Fastify = await loadFastify('The demo');
  loadDriver();
  const say = options.onLine ?? (() => {});
  const logger = options.logger ?? silentLogger;
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'checkout-kit-demo-')));
  const calls = new Map<string, number>();
  const late = new Set<string>();
  const count: (outcome: string) => FulfillmentHandler = (outcome) => async (resource, ctx) => {
    const key = `${resource.id}:${outcome}`;
    calls.set(key, (calls.get(key) ?? 0) + 1);
    if (ctx.late) late.add(resource.id);
  };

  const endpoint = lateEndpoint();
  const app = Fastify();
  await app.register(checkoutWebhooks, { receiver: endpoint, lifecycle: false });
  const receiverUrl = `${await app.listen({ port: 0, host: '127.0.0.1' })}/webhooks/checkout`;
  const faults = options.faults ?? { drop: 0.3, duplicate: 0.3, reorder: true };
  const sandbox = await startSandbox({ dataDir: join(dataDir, 'sandbox'), webhookUrls: [receiverUrl], faults, logger });
  const store = new SqliteStore({ dir: join(dataDir, 'store') });
  let receiver: WebhookReceiver | undefined;
  try {
    say(`sandbox on ${sandbox.url} (drop ${faults.drop ?? 0}, duplicate ${faults.duplicate ?? 0}${faults.reorder ? ', reorder' : ''}, seed ${sandbox.seed})`);
    say(`receiver on ${receiverUrl}, store ${join(dataDir, 'store')}`);
    await store.open();
    const { merchant } = sandbox.credentials.test;
    const client = new CheckoutClient({
      baseUrl: sandbox.url,
      apiKey: merchant.apiKey,
      signingSecret: merchant.signingSecret,
      invoiceKey: merchant.invoiceKey,
      logger,
    });
    const engine = new FulfillmentEngine({
      store,
      client,
      logger,
      handlers: { paid: count('paid'), overpaid: count('overpaid'), underpaid: count('underpaid'), expired: count('expired') },
    });
    receiver = createReceiver({
      store,
      secrets: [sandbox.credentials.webhookSecret],
      environment: 'test',
      logger,
      pollIntervalMs: 200,
      backoffMs: 200,
      clock: engine.clock,
    });
    attachFulfillment(receiver, engine);
    await receiver.start();
    endpoint.target = receiver;

    const orders = Array.from({ length: options.orders ?? 12 }, (_, i) => ({
      orderId: `demo-${String(i + 1).padStart(3, '0')}`,
      scenario: DEMO_SCENARIOS[i % DEMO_SCENARIOS.length]!,
      amount: `${10 + i}.${String((i * 37) % 100).padStart(2, '0')}`,
    }));
    const created = await Promise.all(
      orders.map(async (order) => ({
        ...order,
        paymentId: (await createCheckout({ store, creator: { client }, logger }, { ...order, email: 'buyer@example.com' })).resourceId,
      })),
    );
    say(`created ${created.length} payments through the checkout helper`);
    await Promise.all(
      created.map(async (order) => {
        for (const step of SCENARIO_STEPS[order.scenario]) {
          const path = `/sandbox/payments/${order.paymentId}/${'expire' in step ? 'expire' : 'deposit'}`;
          const body = 'expire' in step ? {} : { amount: new ExactDecimal(order.amount).times(step.deposit).toFixed() };
          const response = await fetch(`${sandbox.url}${path}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(body),
          });
          if (!response.ok) throw new Error(`sandbox ${path} answered ${response.status}: ${await response.text()}`);
        }
      }),
    );
    say('paid them: full, partial then full, over, under, not at all, and late');
    await sandbox.webhooksIdle();
    await receiver.idle();
    const deliveries = sandbox.deliveries();
    const summary = await reconcile({ store, engine, olderThanMs: 0, logger });
    say(`reconcile: checked ${summary.checked}, fulfilled ${summary.fulfilled}, missed by webhooks ${summary.missedByWebhooks}`);

    const rows: DemoRow[] = [];
    for (const order of created) {
      const record = await store.getResource('payment', order.paymentId);
      const expected = EXPECTED[order.scenario];
      const orderCalls: Record<string, number> = {};
      for (const outcome of ['paid', 'overpaid', 'underpaid', 'expired']) {
        const n = calls.get(`${order.paymentId}:${outcome}`);
        if (n) orderCalls[outcome] = n;
      }
      const required = expected.handlers.every((outcome) => orderCalls[outcome] === 1);
      const allowed = Object.keys(orderCalls).every((outcome) => expected.handlers.includes(outcome) || expected.optional?.includes(outcome));
      const once = Object.values(orderCalls).every((n) => n === 1);
      const wasLate = late.has(order.paymentId);
      const ok = record?.outcome === expected.outcome && required && allowed && once && wasLate === (expected.late ?? false);
      rows.push({
        ...order,
        outcome: record?.outcome ?? 'unknown',
        expected: expected.outcome,
        learnedBy: record?.outcomeSource,
        calls: orderCalls,
        late: wasLate,
        ok,
      });
    }
    const dropped = deliveries.filter((d) => d.dropped).length;
    const duplicated = deliveries.filter((d) => d.duplicated && d.attempt === 1).length;
    return {
      rows,
      reconcile: summary,
      webhooks: { emitted: sandbox.events().length, attempts: deliveries.length, dropped, duplicated },
      ok: rows.every((row) => row.ok) && summary.failed === 0,
      seconds: (Date.now() - started) / 1000,
    };
  } finally {
    await receiver?.stop();
    await app.close();
    await sandbox.close();
    await store.close();
    if (!options.dataDir) await rm(dataDir, { recursive: true, force: true });
  }
}

import Fastify, { type FastifyInstance } from 'fastify';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { afterEach, describe, expect, it } from 'vitest';
import { attachFulfillment } from '../../src/fulfillment/index.js';
import { silentLogger } from '../../src/log/index.js';
import { createMetrics, metricsRoute, observeDeliveries, ServiceCalls } from '../../src/metrics/index.js';
import { recordPass } from '../../src/reconcile/index.js';
import { MemoryStore } from '../../src/store/index.js';
import { checkoutWebhooks, createReceiver, newWebhookSecret, signWebhook } from '../../src/webhooks/index.js';
import { samplePayment } from '../support/fixtures.js';
import { parsePrometheusStrict, sampleValue } from '../support/prometheus.js';
import { T0, testEngine } from '../console/seed.js';

const apps: FastifyInstance[] = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
});

async function listen(app: FastifyInstance): Promise<string> {
  apps.push(app);
  return app.listen({ port: 0, host: '127.0.0.1' });
}

describe('GET /metrics', () => {
  it('exposes deliveries, verification failures, events stored, handler outcomes, the backlog, runs, service calls and reconcile in a format Prometheus parses', async () => {
    const store = new MemoryStore();
    const { engine, clock, observers } = testEngine(store, {
      paid: async () => {},
      underpaid: async () => Promise.reject(new Error('refunds are down')),
    });

    // A stand-in service: the first read answers 200, the next 429.
    const service = Fastify();
    let reads = 0;
    service.get('/v1/payments/:id', async (_request, reply) =>
      ++reads === 1
        ? reply.send({})
        : reply
            .code(429)
            .header('retry-after', '1')
            .send({ error: { code: 'rate_limited', message: 'slow down' } }),
    );
    const serviceUrl = await listen(service);
    const serviceCalls = new ServiceCalls();
    expect((await serviceCalls.fetch(`${serviceUrl}/v1/payments/abc`)).status).toBe(200);
    expect((await serviceCalls.fetch(`${serviceUrl}/v1/payments/abc`, { method: 'GET' })).status).toBe(429);
    await expect(serviceCalls.fetch('http://127.0.0.1:9/v1/invoices')).rejects.toThrow();

    const metrics = createMetrics({ store, clock, serviceCalls, processMetrics: true });
    observers.add(metrics.engineObserver);
    const secret = newWebhookSecret();
    const receiver = createReceiver({ store, secrets: [secret], clock, logger: silentLogger, retention: false });
    attachFulfillment(receiver, engine);
    const app = Fastify();
    await app.register(checkoutWebhooks, { receiver: observeDeliveries(receiver, metrics.observeDelivery) });
    await app.register(metricsRoute, { metrics, token: undefined });
    const url = await listen(app);

    const deliver = async (id: string, data: Record<string, unknown>, sign: { secret?: string; timestamp?: number } = {}) => {
      const body = JSON.stringify({ id, type: 'payment.paid', createdAt: new Date(T0).toISOString(), environment: 'test', data });
      const headers = {
        'content-type': 'application/json',
        ...signWebhook({ id, body, secret: sign.secret ?? secret, timestamp: sign.timestamp ?? T0 / 1000 }),
      };
      return (await fetch(`${url}/webhooks/checkout`, { method: 'POST', headers, body })).status;
    };
    const paid = samplePayment({
      amount: '10',
      amountReceived: '10',
      expiresAt: new Date(T0 + 3_600_000).toISOString(),
      updatedAt: new Date(T0).toISOString(),
    });
    const short = samplePayment({ amount: '10', amountReceived: '4', expiresAt: new Date(T0 - 60_000).toISOString(), updatedAt: new Date(T0).toISOString() });
    expect(await deliver('evt_paid', paid)).toBe(200);
    expect(await deliver('evt_paid', paid)).toBe(200);
    expect(await deliver('evt_short', short)).toBe(200);
    for (let i = 0; i < 3; i++) expect(await deliver(`evt_forged_${i}`, paid, { secret: newWebhookSecret() })).toBe(401);
    expect(await deliver('evt_stale', paid, { timestamp: T0 / 1000 - 3600 })).toBe(401);
    expect((await fetch(`${url}/webhooks/checkout`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status).toBe(400);
    await receiver.dispatchDue();
    await receiver.idle();
    await recordPass(store, { ok: true, checked: 7, missedByWebhooks: 2, durationMs: 1500 }, new Date(T0 - 60_000), silentLogger);

    const response = await fetch(`${url}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const text = await response.text();

    // A parser that Prometheus tooling uses, and a strict one of our own, both read it all.
    const parsed = parsePrometheusTextFormat(text);
    expect(parsed.length).toBeGreaterThan(20);
    const families = parsePrometheusStrict(text);
    for (const family of parsed) expect(families.has(family.name), family.name).toBe(true);

    const value = (name: string, labels: Record<string, string> = {}) => sampleValue(families, name, labels);
    expect(value('checkout_kit_webhook_deliveries_total', { result: 'stored', status: '200' })).toBe(2);
    expect(value('checkout_kit_webhook_deliveries_total', { result: 'duplicate', status: '200' })).toBe(1);
    expect(value('checkout_kit_webhook_deliveries_total', { result: 'invalid_signature', status: '401' })).toBe(4);
    expect(value('checkout_kit_webhook_deliveries_total', { result: 'missing_signature_headers', status: '400' })).toBe(1);
    expect(value('checkout_kit_webhook_verification_failures_total', { reason: 'bad_signature' })).toBe(3);
    expect(value('checkout_kit_webhook_verification_failures_total', { reason: 'timestamp_too_old' })).toBe(1);
    expect(value('checkout_kit_webhook_verification_failures_total', { reason: 'missing_headers' })).toBe(1);
    expect(value('checkout_kit_events_stored_total')).toBe(2);
    expect(value('checkout_kit_handler_calls_total', { outcome: 'paid', result: 'completed' })).toBe(1);
    expect(value('checkout_kit_handler_calls_total', { outcome: 'underpaid', result: 'failed' })).toBe(1);
    expect(value('checkout_kit_handler_duration_seconds_count', { outcome: 'paid', result: 'completed' })).toBe(1);
    expect(value('checkout_kit_handler_duration_seconds_bucket', { outcome: 'paid', result: 'completed', le: '+Inf' })).toBe(1);
    expect(value('checkout_kit_runs_failed_for_good_total')).toBe(1);
    expect(value('checkout_kit_runs', { kind: 'fulfillment', status: 'failed' })).toBe(1);
    expect(value('checkout_kit_runs', { kind: 'event', status: 'pending' })).toBe(0);
    expect(value('checkout_kit_dispatch_backlog', { status: 'pending' })).toBe(0);
    expect(value('checkout_kit_dispatch_oldest_pending_age_seconds')).toBe(0);
    expect(value('checkout_kit_store_up')).toBe(1);
    expect(value('checkout_kit_service_requests_total', { operation: 'payments.get', status: '200' })).toBe(1);
    expect(value('checkout_kit_service_requests_total', { operation: 'payments.get', status: '429' })).toBe(1);
    expect(value('checkout_kit_service_requests_total', { operation: 'invoices.list', status: 'error' })).toBe(1);
    expect(value('checkout_kit_reconcile_last_duration_seconds')).toBe(1.5);
    expect(value('checkout_kit_reconcile_last_missed_by_webhooks')).toBe(2);
    expect(value('checkout_kit_reconcile_last_success_timestamp_seconds')).toBe((T0 - 60_000) / 1000);
    // Every answered delivery is timed (counts only: durations are not asserted).
    expect(value('checkout_kit_webhook_ack_duration_seconds_count', { status: '200' })).toBe(3);
    expect(value('checkout_kit_webhook_ack_duration_seconds_count', { status: '401' })).toBe(4);
    expect(value('checkout_kit_webhook_ack_duration_seconds_bucket', { status: '400', le: '+Inf' })).toBe(1);
    expect(families.get('checkout_kit_webhook_ack_duration_seconds')?.type).toBe('histogram');
    expect(families.get('checkout_kit_handler_duration_seconds')?.type).toBe('histogram');
    expect(families.get('process_cpu_user_seconds_total')?.type).toBe('counter');
  });

  it('reports an undispatched backlog with its age on the injected clock, and a store that fails as store_up 0', async () => {
    const store = new MemoryStore();
    let now = T0;
    const metrics = createMetrics({ store, clock: () => new Date(now), storeCacheMs: 0, processMetrics: false });
    await store.insertEvent(
      {
        id: 'e1',
        type: 'payment.paid',
        environment: 'test',
        createdAt: '',
        receivedAt: new Date(T0).toISOString(),
        resourceKind: 'payment',
        resourceId: 'p',
        body: '{}',
      },
      new Date(T0),
    );
    now = T0 + 90_000;
    let families = parsePrometheusStrict(await metrics.render());
    expect(sampleValue(families, 'checkout_kit_dispatch_backlog', { status: 'pending' })).toBe(1);
    expect(sampleValue(families, 'checkout_kit_dispatch_oldest_pending_age_seconds')).toBe(90);
    // No pass yet: 0, so that `time() - …` alert rules fire when reconcile never ran.
    expect(sampleValue(families, 'checkout_kit_reconcile_last_success_timestamp_seconds')).toBe(0);
    store.summarize = async () => Promise.reject(new Error('disk gone'));
    families = parsePrometheusStrict(await metrics.render());
    expect(sampleValue(families, 'checkout_kit_store_up')).toBe(0);
    expect(sampleValue(families, 'checkout_kit_dispatch_backlog', { status: 'pending' })).toBeUndefined();
  });

  // Over a real loopback socket: a proxy on this host connects from 127.0.0.1 too, often with no forwarding header.
  it('with a token, answers only scrapers that send it, this machine included', async () => {
    const token = 'scrape-token-0123456789abcdef';
    const metrics = createMetrics({ store: new MemoryStore(), processMetrics: false });
    const app = Fastify();
    await app.register(metricsRoute, { metrics, token });
    const url = `${await listen(app)}/metrics`;
    const refusal = { error: { code: 'unauthorized', message: expect.stringMatching(/Missing or wrong console token: send CHECKOUT_CONSOLE_TOKEN/) } };

    const plain = await fetch(url);
    expect(plain.status).toBe(401);
    expect(plain.headers.get('www-authenticate')).toBe('Bearer realm="checkout-kit"');
    expect(await plain.json()).toEqual(refusal);
    const wrong = await fetch(url, { headers: { authorization: `Bearer ${token.slice(0, -1)}` } });
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toEqual(refusal);
    const forwarded = await fetch(url, { headers: { 'x-forwarded-for': '198.51.100.7' } });
    expect(forwarded.status).toBe(401);

    const scraped = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
    expect(scraped.status).toBe(200);
    expect(parsePrometheusStrict(await scraped.text()).has('checkout_kit_runs')).toBe(true);
    // A scraper elsewhere (behind a proxy that says so) gets in with the token as well.
    expect((await fetch(url, { headers: { authorization: `Bearer ${token}`, 'x-forwarded-for': '198.51.100.7' } })).status).toBe(200);
  });

  it('without a token, answers this machine and refuses a scraper a proxy relays or one elsewhere', async () => {
    const metrics = createMetrics({ store: new MemoryStore(), processMetrics: false });
    const app = Fastify();
    await app.register(metricsRoute, { metrics, token: undefined });
    const url = `${await listen(app)}/metrics`;
    expect((await fetch(url)).status).toBe(200);
    for (const name of ['forwarded', 'x-forwarded-for', 'x-real-ip', 'x-forwarded-host']) {
      const relayed = await fetch(url, { headers: { [name]: name === 'forwarded' ? 'for=198.51.100.7' : '198.51.100.7' } });
      expect(relayed.status, name).toBe(401);
      expect(await relayed.json(), name).toEqual({ error: { code: 'unauthorized', message: expect.stringMatching(/only requests from this machine/) } });
    }
    const elsewhere = await app.inject({ url: '/metrics', remoteAddress: '10.1.2.3' });
    expect(elsewhere.statusCode).toBe(401);
    // No token is configured, so none opens it.
    expect((await app.inject({ url: '/metrics', remoteAddress: '10.1.2.3', headers: { authorization: 'Bearer anything-at-all-0123456789' } })).statusCode).toBe(
      401,
    );
  });
});

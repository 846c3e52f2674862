import { Writable } from 'node:stream';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { checkoutRoutes } from '../../src/checkout/index.js';
import { CheckoutClient } from '../../src/client/index.js';
import { checkoutConsole } from '../../src/console/index.js';
import { SPEC_ERROR_OPTIONS, specErrorHandler } from '../../src/fastify/error-replies.js';
import { FulfillmentEngine } from '../../src/fulfillment/index.js';
import { createLogger } from '../../src/log/index.js';
import { ServiceCalls } from '../../src/metrics/index.js';
import { MemoryStore } from '../../src/store/index.js';
import { samplePayment, TEST_KEYS } from '../support/fixtures.js';
import { listenOnLoopback } from '../support/ports.js';

const apps: FastifyInstance[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

/** checkoutUrls the service must never be trusted with; each fails the spec's shape (an http(s) URL). */
const BAD_CHECKOUT_URLS = ['javascript:alert(1)', '//evil.example/c', 'data:text/html,hi', 'https:/\\evil.example'];

/**
 * The service on 127.0.0.1, answering every create with 201 and the checkoutUrl of its order
 * (`referenceId` is the order id), and every read with 200 and an amount that is a JSON number.
 */
async function malformedService(checkoutUrls: Record<string, string>): Promise<string> {
  const service = Fastify();
  apps.push(service);
  service.post('/v1/payments', async (request, reply) => {
    const { referenceId } = request.body as { referenceId: string };
    return reply.code(201).send(samplePayment({ referenceId, checkoutUrl: checkoutUrls[referenceId] }));
  });
  service.get<{ Params: { id: string } }>('/v1/payments/:id', async (request) => ({ ...samplePayment({ id: request.params.id }), amount: 10 }));
  return `http://127.0.0.1:${await listenOnLoopback(service)}`;
}

/** A shop as a merchant wires one into fastify: the checkout routes, an own route that reads the service, the console. */
async function shop(serviceUrl: string) {
  let logs = '';
  const logger = createLogger({ level: 'info', destination: new Writable({ write: (chunk, _e, done) => ((logs += String(chunk)), done()) }) });
  const serviceCalls = new ServiceCalls();
  const client = new CheckoutClient({ baseUrl: serviceUrl, ...TEST_KEYS, retries: 2, minRetryDelayMs: 1, logger, onCall: serviceCalls.onCall });
  const store = new MemoryStore();
  const engine = new FulfillmentEngine({ store, client, handlers: {}, logger });
  const app = Fastify({ ...SPEC_ERROR_OPTIONS });
  apps.push(app);
  app.setErrorHandler(specErrorHandler(logger, 'shop'));
  await app.register(checkoutRoutes, {
    store,
    engine,
    creator: { client },
    redirect: { allowedHosts: ['127.0.0.1'], allowLoopbackHttp: true },
    publicUrl: 'https://shop.example',
    logger,
  });
  app.get<{ Params: { id: string } }>('/orders/:id/payment', async (request) => client.payments.get(request.params.id));
  await app.register(checkoutConsole, {
    store,
    engine,
    logger,
    // An action whose work reads the service.
    reconcile: async () => {
      await client.payments.get(samplePayment().id);
      throw new Error('the read above was expected to fail');
    },
  });
  const origin = `http://127.0.0.1:${await listenOnLoopback(app)}`;
  const lines = () =>
    logs
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { level: number; msg: string; operation?: string; fields?: string[] });
  return { origin, store, serviceCalls, lines };
}

const json = async (response: Response) => ({ status: response.status, body: (await response.json()) as unknown });

describe("a service answer that does not match the spec is the service's fault", () => {
  it('POST /checkout: 502 invalid_response naming the operation and the field, a warning, counted; never redirected', async () => {
    const orders = Object.fromEntries(BAD_CHECKOUT_URLS.map((url, i) => [`o-${i}`, url]));
    const { origin, serviceCalls, lines } = await shop(await malformedService(orders));

    for (const orderId of Object.keys(orders)) {
      const answer = await fetch(`${origin}/checkout`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ orderId, amount: '10.00' }),
      });
      expect(answer.headers.get('location'), orderId).toBeNull();
      expect(await json(answer), orderId).toEqual({
        status: 502,
        body: {
          error: {
            code: 'invalid_response',
            message: "The payment service's answer to payments.create does not match its spec (checkoutUrl); nothing was redirected. Try again later.",
          },
        },
      });
    }
    expect(lines().filter((line) => line.level >= 50)).toEqual([]);
    const warnings = lines().filter((line) => line.level === 40);
    expect(warnings).toHaveLength(BAD_CHECKOUT_URLS.length);
    for (const warning of warnings) {
      expect(warning).toMatchObject({ operation: 'payments.create', fields: ['checkoutUrl'] });
      expect(warning.msg).toMatch(
        /^payments\.create: the service's 201 answer does not match the spec \(POST http:\/\/127\.0\.0\.1:\d+\/v1\/payments\): checkoutUrl: /,
      );
    }
    // Asked once per order (never retried), each counted as a failed exchange.
    expect(serviceCalls.snapshot()).toEqual([{ operation: 'payments.create', status: 'invalid_response', count: BAD_CHECKOUT_URLS.length }]);
  });

  it("any other route of the app, and a console action, answer 502 too; the return page answers the order's stored state", async () => {
    const { origin, store, serviceCalls, lines } = await shop(await malformedService({}));
    const { id } = samplePayment();

    expect(await json(await fetch(`${origin}/orders/${id}/payment`))).toEqual({
      status: 502,
      body: { error: { code: 'invalid_response', message: "The payment service's answer to payments.get does not match its spec (amount)." } },
    });

    // The console's reconcile action, confirmed as a browser does it.
    const page = await (await fetch(`${origin}/checkout-kit/actions/reconcile`)).text();
    const form = Object.fromEntries([...page.matchAll(/<input type="hidden"[^>]*name="([^"]+)" value="([^"]*)"/g)].map(([, name, value]) => [name!, value!]));
    expect(Object.keys(form).sort()).toEqual(['csrf', 'nonce']);
    const action = await fetch(`${origin}/checkout-kit/actions/reconcile`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form).toString(),
    });
    expect(await json(action)).toEqual({
      status: 502,
      body: { error: { code: 'invalid_response', message: "The payment service's answer to payments.get does not match its spec (amount)." } },
    });

    // A buyer back from paying: the read fails like an outage, and the page says the state last stored.
    await store.putCheckoutAttempt({ orderId: 'o-back', kind: 'payment', idempotencyKey: 'ck-payment-o-back', requestHash: 'h' });
    await store.completeCheckoutAttempt('o-back', { resourceId: id, checkoutUrl: 'http://127.0.0.1/pay' });
    const back = await json(await fetch(`${origin}/checkout/return?orderId=o-back`, { headers: { accept: 'application/json' } }));
    expect(back).toMatchObject({ status: 200, body: { orderId: 'o-back', state: 'pending', confirmed: false } });

    expect(lines().filter((line) => line.level >= 50)).toEqual([]);
    expect(lines().filter((line) => line.level === 40 && line.operation === 'payments.get' && line.fields?.join() === 'amount')).toHaveLength(3);
    expect(serviceCalls.snapshot()).toEqual([{ operation: 'payments.get', status: 'invalid_response', count: 3 }]);
  });
});

import { join } from 'node:path';
import { Writable } from 'node:stream';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { checkoutRoutes } from '../../src/checkout/index.js';
import { orderIdempotencyKey } from '../../src/domain/idempotency.js';
import { CheckoutClient } from '../../src/client/index.js';
import { SPEC_ERROR_OPTIONS } from '../../src/fastify/error-replies.js';
import { FulfillmentEngine } from '../../src/fulfillment/index.js';
import { createLogger } from '../../src/log/index.js';
import { SqliteStore } from '../../src/store/index.js';
import { TEST_KEYS } from '../support/fixtures.js';
import { OFF_SPEC_ANSWERS, offSpecService } from '../support/off-spec-service.js';
import { listenOnLoopback } from '../support/ports.js';
import { removeTempDirs, tempDir } from '../support/temp-dirs.js';

const closing: Array<{ close(): Promise<unknown> }> = [];
afterEach(async () => {
  for (const open of closing.splice(0).reverse()) await open.close();
  await removeTempDirs();
});

/** A shop on 127.0.0.1 with the checkout routes, its orders in a SQLite store in a temp folder. */
async function shop(serviceUrl: string) {
  let logs = '';
  const logger = createLogger({ level: 'info', destination: new Writable({ write: (chunk, _e, done) => ((logs += String(chunk)), done()) }) });
  const client = new CheckoutClient({ baseUrl: serviceUrl, ...TEST_KEYS, retries: 2, minRetryDelayMs: 1, logger });
  const store = new SqliteStore({ dir: join(await tempDir('ck-off-spec-'), 'store') });
  await store.open();
  closing.push(store);
  const engine = new FulfillmentEngine({ store, client, handlers: {}, logger });
  const app: FastifyInstance = Fastify({ ...SPEC_ERROR_OPTIONS });
  closing.push(app);
  await app.register(checkoutRoutes, {
    store,
    engine,
    creator: { client },
    redirect: { allowedHosts: [new URL(serviceUrl).host], allowLoopbackHttp: true },
    publicUrl: 'https://shop.example',
    logger,
  });
  const origin = `http://127.0.0.1:${await listenOnLoopback(app)}`;
  const checkout = async (orderId: string, amount = '10.00') => {
    const answer = await fetch(`${origin}/checkout`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ orderId, amount }),
    });
    const text = await answer.text();
    return { status: answer.status, location: answer.headers.get('location'), body: text === '' ? undefined : (JSON.parse(text) as unknown) };
  };
  const back = async (orderId: string) => {
    const answer = await fetch(`${origin}/checkout/return?orderId=${orderId}`, { headers: { accept: 'application/json' } });
    return { status: answer.status, body: (await answer.json()) as unknown };
  };
  const lines = () =>
    logs
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { level: number; msg: string; orderId?: string; err?: { status?: number; code?: string } });
  return { store, checkout, back, lines };
}

describe("a 400 or 422 without the spec's error object is the service's fault, not the buyer's", () => {
  it.each(Object.entries(OFF_SPEC_ANSWERS))(
    'POST /checkout, %s: 502 invalid_response, the attempt stands under its key, and the retry once the service answers creates one payment',
    async (_what, offSpec) => {
      const service = await offSpecService();
      closing.push(service);
      const { store, checkout, back, lines } = await shop(service.url);
      const key = orderIdempotencyKey('payment', 'o-1');

      service.offSpec = offSpec;
      for (let tries = 0; tries < 2; tries++) {
        expect(await checkout('o-1')).toEqual({
          status: 502,
          location: null,
          body: {
            error: {
              code: 'invalid_response',
              message: `The payment service's ${offSpec.status} answer to payments.create does not match its spec (no error object); nothing was redirected. Try again later.`,
            },
          },
        });
        // Not refused: the order keeps its first attempt and its key.
        expect(await store.getCheckoutAttempt('o-1')).toMatchObject({ number: 1, status: 'sending', idempotencyKey: key });
      }
      // The order cannot change while its payment may exist: nothing more is sent.
      expect(await checkout('o-1', '11.00')).toMatchObject({ status: 409, body: { error: { code: 'idempotency_key_reused' } } });
      expect(service.creates).toEqual([
        { path: '/v1/payments', idempotencyKey: key },
        { path: '/v1/payments', idempotencyKey: key },
      ]);
      expect(await back('o-1')).toMatchObject({ status: 404, body: { error: { code: 'not_found' } } });

      service.offSpec = undefined;
      const created = await checkout('o-1');
      expect(created.status).toBe(303);
      expect(service.payments.size).toBe(1);
      const payment = service.payments.get(key)!;
      expect(created.location).toBe(payment.checkoutUrl);
      expect(await store.getCheckoutAttempt('o-1')).toMatchObject({ number: 1, status: 'created', idempotencyKey: key, resourceId: payment.id });
      expect(await checkout('o-1')).toMatchObject({ status: 303, location: payment.checkoutUrl });
      expect(service.payments.size).toBe(1);

      // The buyer back while the service's reads answer off the spec: the order's stored state, unconfirmed.
      service.offSpec = offSpec;
      expect(await back('o-1')).toMatchObject({ status: 200, body: { orderId: 'o-1', state: 'pending', resourceId: payment.id, confirmed: false } });

      // Each off-spec create is a warning naming the order; nothing was logged as an error.
      const warnings = lines().filter((line) => line.level === 40 && line.orderId === 'o-1');
      expect(warnings.map((line) => line.msg)).toEqual([
        'the service answered the payment for order o-1 off its spec; the attempt stands under its key',
        'the service answered the payment for order o-1 off its spec; the attempt stands under its key',
        'could not confirm a return with the payment service; answered the stored state',
      ]);
      expect(warnings[0]!.err).toMatchObject({ status: offSpec.status, code: `http_${offSpec.status}` });
      expect(lines().filter((line) => line.level >= 50)).toEqual([]);
    },
  );
});

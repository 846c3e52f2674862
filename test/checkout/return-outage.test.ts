import { Writable } from 'node:stream';
import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { checkoutRoutes } from '../../src/checkout/index.js';
import { CheckoutClient } from '../../src/client/index.js';
import { NetworkError } from '../../src/errors/index.js';
import { FulfillmentEngine } from '../../src/fulfillment/index.js';
import { createLogger } from '../../src/log/index.js';
import { MemoryStore } from '../../src/store/index.js';
import { FakeReader } from '../support/fake-reader.js';
import { BASE_URL, samplePayment, TEST_KEYS } from '../support/fixtures.js';
import type { Payment } from '../../src/schemas/index.js';

/** The service, as the engine reads it, with switches for an outage and for reads that never answer (until their signal aborts). */
class FlakyReader extends FakeReader {
  down = false;
  hung = false;
  /** While set, reads wait for it before they answer. */
  gate: Promise<void> | undefined;
  /** Reads the engine asked for. */
  calls = 0;
  constructor() {
    super();
    const get = this.payments.get;
    this.payments.get = async (id, options) => {
      this.calls += 1;
      if (this.down) throw new NetworkError(`payments.get failed: connect ECONNREFUSED (GET ${BASE_URL}/v1/payments/${id})`);
      if (this.hung) return new Promise<Payment>((_resolve, reject) => options?.signal?.addEventListener('abort', () => reject(options.signal!.reason)));
      await this.gate;
      return get(id);
    };
  }
}

const apps: Array<{ close(): Promise<unknown> }> = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

async function shopWithOrders(options: { checkoutTimeoutMs?: number } = {}) {
  const store = new MemoryStore();
  const reader = new FlakyReader();
  const paid: string[] = [];
  const engine = new FulfillmentEngine({ store, client: reader, handlers: { paid: async (p) => void paid.push(p.id) } });
  const orders: Record<string, string> = {};
  // Two orders: one the buyer paid in full, one still awaiting its money.
  for (const [orderId, amountReceived] of [
    ['o-paid', '10'],
    ['o-waiting', '0'],
  ] as const) {
    const payment = reader.put(samplePayment({ amount: '10', amountReceived, referenceId: orderId, checkoutUrl: `${BASE_URL}/checkout/${orderId}` }));
    await store.putCheckoutAttempt({ orderId, kind: 'payment', idempotencyKey: `ck-payment-${orderId}`, requestHash: 'h' });
    await store.completeCheckoutAttempt(orderId, { resourceId: payment.id, checkoutUrl: payment.checkoutUrl });
    orders[orderId] = payment.id;
  }
  let logs = '';
  const logger = createLogger({ level: 'info', destination: new Writable({ write: (chunk, _e, done) => ((logs += String(chunk)), done()) }) });
  const app = Fastify();
  apps.push(app);
  // Only the return page is under test: the creator is never called.
  const creator = { client: new CheckoutClient({ baseUrl: BASE_URL, ...TEST_KEYS, retries: 0 }) };
  await app.register(checkoutRoutes, {
    store,
    engine,
    creator,
    redirect: { allowedHosts: [new URL(BASE_URL).host] },
    publicUrl: 'https://shop.example',
    logger,
    ...options,
  });
  const back = (orderId: string, accept = 'application/json') => app.inject({ method: 'GET', url: `/checkout/return?orderId=${orderId}`, headers: { accept } });
  return { app, reader, store, engine, paid, orders, back, logs: () => logs };
}

describe('GET /checkout/return during an outage of the service', () => {
  it('a failed service read answers the stored state (confirmed: false) instead of 500 internal_error, and logs the read', async () => {
    const shop = await shopWithOrders();
    // Before the outage the return confirms and fulfils the paid order.
    const before = await shop.back('o-paid');
    expect(before.statusCode).toBe(200);
    expect(before.json()).toMatchObject({ state: 'paid', outcome: 'paid' });
    expect(shop.paid).toEqual([shop.orders['o-paid']]);

    shop.reader.down = true;
    const readsBefore = shop.reader.reads;
    const paid = await shop.back('o-paid');
    expect(paid.statusCode).toBe(200);
    expect(paid.json()).toMatchObject({
      orderId: 'o-paid',
      state: 'paid',
      outcome: 'paid',
      resourceId: shop.orders['o-paid'],
      amount: '10',
      amountReceived: '10',
      confirmed: false,
      note: expect.stringMatching(/could not reach the payment service/),
    });

    const waiting = await shop.back('o-waiting');
    expect(waiting.statusCode).toBe(200);
    expect(waiting.json()).toMatchObject({
      orderId: 'o-waiting',
      state: 'pending',
      outcome: 'pending',
      confirmed: false,
      note: expect.stringMatching(/still confirming/),
    });
    // Still a way back to the payment page while pending.
    expect(waiting.json().checkoutUrl).toBe(`${BASE_URL}/checkout/o-waiting`);
    expect(shop.reader.reads).toBe(readsBefore);

    // The buyer's page says the same in words, and keeps refreshing.
    const page = await shop.back('o-waiting', 'text/html');
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
    expect(page.body).toContain('data-state="pending"');
    expect(page.body).toContain('still confirming');
    expect(page.body).toContain('http-equiv="refresh"');

    // Each failed read is logged as a warning with the error, once per request.
    const warnings = shop
      .logs()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { level: number; msg: string; orderId?: string; err?: { type: string; message: string } })
      .filter((line) => line.level === 40);
    expect(warnings.map((w) => w.orderId)).toEqual(['o-paid', 'o-waiting', 'o-waiting']);
    expect(warnings[0]).toMatchObject({
      msg: expect.stringMatching(/could not confirm/),
      err: { type: 'NetworkError', message: expect.stringMatching(/ECONNREFUSED/) },
    });
    expect(shop.logs()).not.toContain('internal_error');
    // Nothing was fulfilled twice, nothing moved back.
    expect(shop.paid).toHaveLength(1);
    expect((await shop.store.getResource('payment', shop.orders['o-paid']!))?.outcome).toBe('paid');

    // Once the service is back, the answer is confirmed again.
    shop.reader.down = false;
    const after = (await shop.back('o-waiting')).json();
    expect(after).toMatchObject({ state: 'pending', confirmed: true });
    expect(after.note).toBeUndefined();
  });

  it('a service that does not answer: at checkoutTimeoutMs the stored state (confirmed: false), not a page held until the read gives up', async () => {
    const shop = await shopWithOrders({ checkoutTimeoutMs: 200 });
    expect((await shop.back('o-paid')).json()).toMatchObject({ state: 'paid', confirmed: true });
    shop.reader.hung = true;
    for (const orderId of ['o-paid', 'o-waiting']) {
      const answer = await shop.back(orderId);
      expect(answer.statusCode).toBe(200);
      expect(answer.json()).toMatchObject({ orderId, state: orderId === 'o-paid' ? 'paid' : 'pending', confirmed: false, note: expect.any(String) });
    }
    expect(shop.paid).toHaveLength(1);
    // One short line per return: the timeout's name and message, no timer's stack or DOMException's code constants.
    const lines = shop
      .logs()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { msg: string; err?: unknown });
    const warned = lines.filter((line) => line.msg.startsWith('could not confirm a return'));
    expect(warned).toHaveLength(2);
    for (const line of warned) expect(line.err).toEqual({ type: 'TimeoutError', message: 'no answer within 200 ms' });
  });

  it("returns of one order at the same time share one read of the service (its rate budget is the webhooks' and reconcile's too)", async () => {
    const shop = await shopWithOrders();
    let open!: () => void;
    shop.reader.gate = new Promise<void>((resolve) => (open = resolve));
    // A return's confirm joins the read under way as it enters the engine.
    let entered = 0;
    const process = shop.engine.process.bind(shop.engine);
    shop.engine.process = (input) => ((entered += 1), process(input));
    const answers = Array.from({ length: 6 }, () => shop.back('o-waiting'));
    await expect.poll(() => entered, { timeout: 10_000 }).toBe(6);
    open();
    for (const answer of await Promise.all(answers)) expect(answer.json()).toMatchObject({ state: 'pending', confirmed: true });
    expect(shop.reader.calls).toBe(1);
  });

  it('the amounts read as the service wrote them ("10.00"), confirmed or from the store during an outage', async () => {
    const shop = await shopWithOrders();
    const payment = shop.reader.put(
      samplePayment({ amount: '10.00', amountReceived: '10.00', referenceId: 'o-cents', checkoutUrl: `${BASE_URL}/checkout/o-cents` }),
    );
    await shop.store.putCheckoutAttempt({ orderId: 'o-cents', kind: 'payment', idempotencyKey: 'ck-payment-o-cents', requestHash: 'h' });
    await shop.store.completeCheckoutAttempt('o-cents', { resourceId: payment.id, checkoutUrl: payment.checkoutUrl });
    expect((await shop.back('o-cents')).json()).toMatchObject({ state: 'paid', amount: '10.00', amountReceived: '10.00', confirmed: true });
    shop.reader.down = true;
    expect((await shop.back('o-cents')).json()).toMatchObject({ state: 'paid', amount: '10.00', amountReceived: '10.00', confirmed: false });
  });

  it('an orderId given twice is a 400 saying so, not "orderId is required"', async () => {
    const shop = await shopWithOrders();
    const twice = await shop.app.inject({ method: 'GET', url: '/checkout/return?orderId=o-paid&orderId=o-waiting', headers: { accept: 'application/json' } });
    expect([twice.statusCode, twice.json()]).toEqual([400, { error: { code: 'invalid_request', message: 'orderId is given 2 times: give it once.' } }]);
    expect(shop.reader.reads).toBe(0);
  });

  it('an unknown order is still 404 during an outage', async () => {
    const shop = await shopWithOrders();
    shop.reader.down = true;
    const unknown = await shop.back('o-nope');
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error.code).toBe('not_found');
  });
});

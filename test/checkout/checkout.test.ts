import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { join } from 'node:path';
import Fastify from 'fastify';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { checkoutRoutes, confirmReturn, createCheckout, handleCheckoutRequest, handleReturnRequest } from '../../src/checkout/index.js';
import { orderIdempotencyKey } from '../../src/domain/idempotency.js';
import { CheckoutClient, PartnerClient } from '../../src/client/index.js';
import { CheckoutError } from '../../src/errors/index.js';
import { FulfillmentEngine } from '../../src/fulfillment/index.js';
import { createLogger, silentLogger } from '../../src/log/index.js';
import type { SandboxHandle } from '../../src/sandbox/index.js';
import { SqliteStore } from '../../src/store/index.js';
import { loadDriver } from '../../src/store/sqlite/driver.js';
import { MemoryStore, type Store } from '../../src/store/index.js';
import { openDescriptors } from '../support/descriptors.js';
import { DATABASE_URL, TestDatabases } from '../store/postgres/test-database.js';
import { PARTNER_OPTIONS, samplePayment, TEST_KEYS } from '../support/fixtures.js';
import { cleanup, openSandbox, readState, simulate, tempDir } from '../sandbox/helpers.js';

afterEach(cleanup);

function merchantClient(sandbox: SandboxHandle, options: { retries?: number } = {}) {
  const { apiKey, signingSecret, invoiceKey } = sandbox.credentials.test.merchant;
  return new CheckoutClient({ baseUrl: sandbox.url, apiKey, signingSecret, invoiceKey, minRetryDelayMs: 20, ...options });
}

const paymentsAtService = async (sandbox: SandboxHandle, referenceId: string) =>
  (await readState(sandbox)).payments.filter((p) => (p as { referenceId?: string }).referenceId === referenceId).length;

/**
 * A service stand-in on loopback whose every create answers 201 with the payment `answer` makes of
 * the request's body, or holds the request while `hold()` says so; `close` answers what it held.
 */
async function creatingService(answer: (asked: { amount: string; referenceId: string }) => object, hold: () => boolean = () => false) {
  const held: Array<() => void> = [];
  const server = createServer((request, response) => {
    let text = '';
    request.on('data', (chunk: Buffer) => (text += chunk.toString()));
    request.on('end', () => {
      const respond = () => {
        response.writeHead(201, { 'content-type': 'application/json' });
        response.end(JSON.stringify(samplePayment(answer(JSON.parse(text) as { amount: string; referenceId: string }))));
      };
      if (hold()) held.push(respond);
      else respond();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    async close() {
      for (const respond of held.splice(0)) respond();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

describe('createCheckout against the sandbox', () => {
  it('a crash between sending the create and storing its answer, then a retry after restart: one payment at the service', async () => {
    const sandbox = await openSandbox();
    const dir = await tempDir('ck-checkout-store-');
    const client = merchantClient(sandbox);
    const first = new SqliteStore({ dir: join(dir, 'store') });
    await first.open();
    // The process "dies" right after the service answered, before the answer is stored.
    // A Proxy, not Object.create(first): the store's methods must run on the store itself (an
    // object inheriting from it takes its own copies of the fields they set, such as the open
    // journal, which first.close() then never closes).
    const crashing = new Proxy(first, {
      get(target, property) {
        if (property === 'completeCheckoutAttempt') {
          return async () => {
            throw new Error('process killed');
          };
        }
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    }) as Store;
    await expect(createCheckout({ store: crashing, creator: { client } }, { orderId: 'order-crash', amount: '12.50', email: 'b@example.com' })).rejects.toThrow(
      'process killed',
    );
    await first.close();
    // The store let go of its files: the wrapper's calls ran on the store itself.
    if (process.platform === 'linux') expect([...(await openDescriptors(join(dir, 'store'))).keys()]).toEqual([]);

    const restarted = new SqliteStore({ dir: join(dir, 'store') });
    await restarted.open();
    const retry = await createCheckout({ store: restarted, creator: { client } }, { orderId: 'order-crash', amount: '12.50', email: 'b@example.com' });
    expect(retry.reused).toBe(true);
    expect(await paymentsAtService(sandbox, 'order-crash')).toBe(1);
    expect(await restarted.getCheckoutAttempt('order-crash')).toMatchObject({ status: 'created', resourceId: retry.resourceId });
    expect((await restarted.getResource('payment', retry.resourceId))?.orderId).toBe('order-crash');
    await restarted.close();
  });

  it('the server closing while a checkout waits out a Retry-After: 503 at once; the attempt stays recorded, and the retry creates the one payment', async () => {
    const sandbox = await openSandbox();
    const { apiKey, signingSecret } = sandbox.credentials.test.merchant;
    // A 429's Retry-After has paused the shared limiter: every call waits a minute.
    const held = new CheckoutClient({ baseUrl: sandbox.url, apiKey, signingSecret });
    held.rateLimiter.throttled(60_000);
    const store = new MemoryStore();
    const closing = new AbortController();
    const waiting = createCheckout({ store, creator: { client: held }, signal: closing.signal }, { orderId: 'order-closing', amount: '7.00' }).catch(
      (e: unknown) => e,
    );
    // Its create call waits in the limiter.
    while (held.rateLimiter.queued === 0) await new Promise((resolve) => setImmediate(resolve));
    closing.abort(new Error('the server is closing'));
    const refused = await waiting;
    expect(refused).toBeInstanceOf(CheckoutError);
    expect(refused).toMatchObject({ code: 'service_unreachable', status: 503 });
    expect(await store.getCheckoutAttempt('order-closing')).toMatchObject({ status: 'sending' });
    expect(await paymentsAtService(sandbox, 'order-closing')).toBe(0);
    // A checkout arriving once the close has begun records nothing.
    expect(
      await createCheckout({ store, creator: { client: held }, signal: closing.signal }, { orderId: 'order-late', amount: '7.00' }).catch((e: unknown) => e),
    ).toMatchObject({ code: 'service_unreachable' });
    expect(await store.getCheckoutAttempt('order-late')).toBeUndefined();
    // After the restart: the same key, one payment.
    const retry = await createCheckout({ store, creator: { client: merchantClient(sandbox) } }, { orderId: 'order-closing', amount: '7.00' });
    expect(await paymentsAtService(sandbox, 'order-closing')).toBe(1);
    expect(await store.getCheckoutAttempt('order-closing')).toMatchObject({ status: 'created', resourceId: retry.resourceId });
  });

  it('a double click (concurrent calls) and a second server give the same payment and checkoutUrl', async () => {
    const sandbox = await openSandbox({ createDelayMs: 100 });
    const client = merchantClient(sandbox);
    const store = new MemoryStore();
    const results = await Promise.all(Array.from({ length: 5 }, () => createCheckout({ store, creator: { client } }, { orderId: 'order-dbl', amount: '3' })));
    const otherServer = await createCheckout({ store: new MemoryStore(), creator: { client } }, { orderId: 'order-dbl', amount: '3' });
    expect(new Set([...results, otherServer].map((r) => r.checkoutUrl)).size).toBe(1);
    expect(await paymentsAtService(sandbox, 'order-dbl')).toBe(1);
  });

  it('the same order id with a different amount is a clear idempotency_key_reused error, locally and at the service', async () => {
    const sandbox = await openSandbox();
    const client = merchantClient(sandbox);
    const store = new MemoryStore();
    await createCheckout({ store, creator: { client } }, { orderId: 'order-amt', amount: '10' });
    const local = await createCheckout({ store, creator: { client } }, { orderId: 'order-amt', amount: '11' }).catch((e: unknown) => e);
    expect(local).toBeInstanceOf(CheckoutError);
    expect(local).toMatchObject({ code: 'idempotency_key_reused', status: 409 });
    // A server whose store lost the attempt: the service refuses the reused key.
    const remote = await createCheckout({ store: new MemoryStore(), creator: { client } }, { orderId: 'order-amt', amount: '11' }).catch((e: unknown) => e);
    expect(remote).toMatchObject({ code: 'idempotency_key_reused', status: 409 });
    expect(await paymentsAtService(sandbox, 'order-amt')).toBe(1);
  });

  it('clear errors the shop can show: token not available, invalid amount, service unreachable', async () => {
    const sandbox = await openSandbox();
    const store = new MemoryStore();
    const creator = { client: merchantClient(sandbox) };
    await expect(createCheckout({ store, creator }, { orderId: 'o-tok', amount: '5', token: 'DOGE' })).rejects.toMatchObject({
      code: 'token_not_available',
      status: 422,
    });
    await expect(createCheckout({ store, creator }, { orderId: 'o-net', amount: '5', networkId: 999 })).rejects.toMatchObject({
      code: 'network_not_available',
      status: 422,
    });
    await expect(createCheckout({ store, creator }, { orderId: 'o-amt', amount: '-5' })).rejects.toMatchObject({ code: 'invalid_request', status: 400 });
    const unreachable = new CheckoutClient({ ...sandbox.credentials.test.merchant, baseUrl: 'http://127.0.0.1:9', retries: 0 });
    await expect(createCheckout({ store, creator: { client: unreachable } }, { orderId: 'o-down', amount: '5' })).rejects.toMatchObject({
      code: 'service_unreachable',
      status: 503,
    });
  });

  it('a create the service refused (422) does not block a corrected retry of the order', async () => {
    const sandbox = await openSandbox();
    const store = new MemoryStore();
    const creator = { client: merchantClient(sandbox) };
    await expect(createCheckout({ store, creator }, { orderId: 'o-fix', amount: '5', token: 'DOGE' })).rejects.toMatchObject({
      code: 'token_not_available',
      status: 422,
    });
    expect(await store.getCheckoutAttempt('o-fix')).toMatchObject({ number: 1, status: 'refused' });
    const fixed = await createCheckout({ store, creator }, { orderId: 'o-fix', amount: '5' });
    // A new key: the service may remember the refused body under the old one.
    expect(fixed).toMatchObject({ reused: false, idempotencyKey: orderIdempotencyKey('payment', 'o-fix', 2) });
    expect(fixed.idempotencyKey).not.toBe(orderIdempotencyKey('payment', 'o-fix'));
    expect(await store.getCheckoutAttempt('o-fix')).toMatchObject({ number: 2, status: 'created', resourceId: fixed.resourceId });
    // From then on the order is pinned to that payment, as before.
    expect(await createCheckout({ store, creator }, { orderId: 'o-fix', amount: '5' })).toMatchObject({ reused: true, resourceId: fixed.resourceId });
    await expect(createCheckout({ store, creator }, { orderId: 'o-fix', amount: '6' })).rejects.toMatchObject({ code: 'idempotency_key_reused' });
    expect(await paymentsAtService(sandbox, 'o-fix')).toBe(1);
  });

  it("a create refused as too large for the service (413, the buyer's e-mail) is the buyer's 400, not the shop's keys; the corrected retry creates the payment", async () => {
    const sandbox = await openSandbox();
    const store = new MemoryStore();
    const creator = { client: merchantClient(sandbox) };
    // Over the sandbox's 64 KiB body limit: the service answers 413 with its error object.
    const huge = `${'a'.repeat(70_000)}@example.com`;
    const error = await createCheckout({ store, creator }, { orderId: 'o-huge', amount: '5', email: huge }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'invalid_request', status: 400, message: 'The request body is larger than 65536 bytes.' });
    expect(await store.getCheckoutAttempt('o-huge')).toMatchObject({ number: 1, status: 'refused' });
    const fixed = await createCheckout({ store, creator }, { orderId: 'o-huge', amount: '5', email: 'buyer@example.com' });
    expect(fixed).toMatchObject({ reused: false, idempotencyKey: orderIdempotencyKey('payment', 'o-huge', 2) });
    expect(await paymentsAtService(sandbox, 'o-huge')).toBe(1);
  });

  it("a later attempt's key never equals another order's first key", () => {
    expect(orderIdempotencyKey('payment', 'A', 2)).not.toBe(orderIdempotencyKey('payment', 'A~2'));
    expect(new Set([1, 2, 3].map((n) => orderIdempotencyKey('payment', 'A', n))).size).toBe(3);
  });

  it("an order id shaped like a hashed key never gets another order's key, so each order gets its own payment", async () => {
    const hashed = (id: string) => createHash('sha256').update(id).digest('hex');
    const unicode = 'ü-order-😀';
    const lookalikes = [`sha256-${hashed(unicode)}`, `attempt2-sha256-${hashed(unicode)}`];
    const keys = [
      orderIdempotencyKey('payment', unicode),
      orderIdempotencyKey('payment', unicode, 2),
      ...lookalikes.map((id) => orderIdempotencyKey('payment', id)),
    ];
    expect(new Set(keys).size).toBe(keys.length);

    const sandbox = await openSandbox();
    const store = new MemoryStore();
    const creator = { client: merchantClient(sandbox) };
    const first = await createCheckout({ store, creator }, { orderId: unicode, amount: '5' });
    for (const orderId of lookalikes) {
      const created = await createCheckout({ store, creator }, { orderId, amount: '5' });
      expect(created).toMatchObject({ reused: false });
      expect(created.resourceId).not.toBe(first.resourceId);
      expect(await store.getCheckoutAttempt(orderId)).toMatchObject({ number: 1, status: 'created' });
    }
  });

  it('an unknown result (service unreachable) keeps the attempt: the order cannot change meanwhile', async () => {
    const sandbox = await openSandbox();
    const store = new MemoryStore();
    const unreachable = new CheckoutClient({ ...sandbox.credentials.test.merchant, baseUrl: 'http://127.0.0.1:9', retries: 0 });
    await expect(createCheckout({ store, creator: { client: unreachable } }, { orderId: 'o-unk', amount: '5' })).rejects.toMatchObject({
      code: 'service_unreachable',
    });
    expect(await store.getCheckoutAttempt('o-unk')).toMatchObject({ number: 1, status: 'sending' });
    // A buyer who comes back meanwhile is told to place the order again, not that none was made.
    const engine = new FulfillmentEngine({ store, handlers: {}, logger: silentLogger });
    await expect(confirmReturn({ store, engine }, 'o-unk')).rejects.toMatchObject({
      code: 'not_found',
      message: 'The checkout of order o-unk was not confirmed by the payment service: place the order again to continue with it.',
    });
    const creator = { client: merchantClient(sandbox) };
    await expect(createCheckout({ store, creator }, { orderId: 'o-unk', amount: '7' })).rejects.toMatchObject({ code: 'idempotency_key_reused' });
    expect(await createCheckout({ store, creator }, { orderId: 'o-unk', amount: '5' })).toMatchObject({ idempotencyKey: 'ck-payment-o-unk' });
  });

  it('a reused attempt whose resource was never recorded is recorded for reconcile', async () => {
    const sandbox = await openSandbox();
    const client = merchantClient(sandbox);
    const store = new MemoryStore();
    const first = await createCheckout({ store, creator: { client } }, { orderId: 'o-lost', amount: '2' });
    // As if the process had died after recording the attempt but before recording the resource.
    const forgetful = new MemoryStore();
    await forgetful.putCheckoutAttempt({ ...(await store.getCheckoutAttempt('o-lost'))! });
    await forgetful.completeCheckoutAttempt('o-lost', { resourceId: first.resourceId, checkoutUrl: first.checkoutUrl });
    expect(await forgetful.getResource('payment', first.resourceId)).toBeUndefined();
    await createCheckout({ store: forgetful, creator: { client } }, { orderId: 'o-lost', amount: '2' });
    expect(await forgetful.getResource('payment', first.resourceId)).toMatchObject({ orderId: 'o-lost', open: true });
  });

  it('a created payment with another amount or referenceId than the order asked for is a 502 invalid_response: not recorded, never redirected', async () => {
    // The service creates the payment with `answer`'s changes to the request.
    let answer: (asked: { amount: string; referenceId: string }) => object = (asked) => asked;
    const service = await creatingService((asked) => answer(asked));
    try {
      const client = new CheckoutClient({ ...TEST_KEYS, baseUrl: service.url, retries: 0 });
      const store = new MemoryStore();
      expect(await createCheckout({ store, creator: { client } }, { orderId: 'o-asked', amount: '5.0' })).toMatchObject({ orderId: 'o-asked' });
      for (const [orderId, change, field] of [
        ['o-under', { amount: '0.01' }, 'amount'],
        ['o-other', { referenceId: 'someone-else' }, 'referenceId'],
      ] as const) {
        answer = (asked) => ({ ...asked, ...change });
        const error = await createCheckout({ store, creator: { client } }, { orderId, amount: '5.00' }).catch((caught: unknown) => caught);
        expect(error).toMatchObject({ code: 'invalid_response', status: 502 });
        expect((error as Error).message).toMatch(
          new RegExp(`^The payment service created payment \\S+ for order ${orderId} with a different ${field} from the one asked for; nothing was redirected`),
        );
        expect(await store.listResources()).toHaveLength(1);
        expect(await store.getCheckoutAttempt(orderId)).toMatchObject({ status: 'sending' });
      }
    } finally {
      await service.close();
    }
  });

  it("a partner's payment created for another merchant than the order's is a 502 invalid_response: not recorded, never redirected", async () => {
    const merchantId = '0b6f2d3e-6f43-4f0a-9d55-3f1c2a7b8e01';
    const otherMerchant = '7c1e4a90-2b5d-4e8f-a6c3-9d0e1f2a3b4c';
    let answer: (asked: { amount: string; referenceId: string }) => object = (asked) => asked;
    const service = await creatingService((asked) => answer(asked));
    try {
      const partner = new PartnerClient({ ...PARTNER_OPTIONS, baseUrl: service.url, retries: 0 });
      const store = new MemoryStore();
      const creator = { partner, merchantId };
      expect(await createCheckout({ store, creator }, { orderId: 'o-ours', amount: '5' })).toMatchObject({ orderId: 'o-ours' });
      answer = (asked) => ({ ...asked, merchantId: otherMerchant });
      const error = await createCheckout({ store, creator }, { orderId: 'o-theirs', amount: '5' }).catch((caught: unknown) => caught);
      expect(error).toMatchObject({ code: 'invalid_response', status: 502 });
      expect((error as Error).message).toMatch(
        /^The payment service created payment \S+ for order o-theirs with a different merchantId from the one asked for; nothing was redirected/,
      );
      expect(await store.listResources()).toHaveLength(1);
      expect(await store.getCheckoutAttempt('o-theirs')).toMatchObject({ status: 'sending' });
      // The same merchant in capitals: a UUID is one whatever its case.
      answer = (asked) => ({ ...asked, merchantId });
      const inCapitals = { partner, merchantId: merchantId.toUpperCase() };
      expect(await createCheckout({ store, creator: inCapitals }, { orderId: 'o-caps', amount: '5' })).toMatchObject({ orderId: 'o-caps' });
    } finally {
      await service.close();
    }
  });

  it('service refusals the buyer cannot fix are service_rejected (502), not a 500', async () => {
    const sandbox = await openSandbox();
    const wrongKey = new CheckoutClient({ ...sandbox.credentials.test.merchant, apiKey: 'svc_mk_test_notarealkey0000', baseUrl: sandbox.url, retries: 0 });
    await expect(createCheckout({ store: new MemoryStore(), creator: { client: wrongKey } }, { orderId: 'o-401', amount: '1' })).rejects.toMatchObject({
      code: 'service_rejected',
      status: 502,
    });
  });

  it("a redirect or another server's page (no error object) is service_rejected (502) pointing at CHECKOUT_BASE_URL, not at the keys; the attempt stands", async () => {
    const answers: Record<string, [number, Record<string, string>, string]> = {
      'o-302': [302, { location: 'https://api.example/v1/payments' }, ''],
      'o-404': [404, { 'content-type': 'text/html' }, '<h1>Not Found</h1>'],
    };
    const server = createServer((request, response) => {
      let text = '';
      request.on('data', (chunk: Buffer) => (text += chunk.toString()));
      request.on('end', () => {
        const [status, headers, body] = answers[(JSON.parse(text) as { referenceId: string }).referenceId]!;
        response.writeHead(status, headers).end(body);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const client = new CheckoutClient({ ...TEST_KEYS, baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, retries: 0 });
      const store = new MemoryStore();
      for (const [orderId, [status]] of Object.entries(answers)) {
        const error = await createCheckout({ store, creator: { client } }, { orderId, amount: '5' }).catch((caught: unknown) => caught);
        expect(error, orderId).toMatchObject({ code: 'service_rejected', status: 502 });
        expect((error as Error).message).toBe(
          `The payment service's address answered ${status} without the service's error object: another server may have answered (a wrong path, or a redirect to follow by hand); check CHECKOUT_BASE_URL with \`checkout-kit doctor\`.`,
        );
        expect(await store.getCheckoutAttempt(orderId)).toMatchObject({ status: 'sending' });
      }
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('a partner creates on behalf of its merchant, once per order', async () => {
    const sandbox = await openSandbox();
    const { partner, merchant } = sandbox.credentials.test;
    const client = new PartnerClient({ baseUrl: sandbox.url, ...partner });
    const store = new MemoryStore();
    const a = await createCheckout(
      { store, creator: { partner: client, merchantId: merchant.merchantId } },
      { orderId: 'p-1', amount: '7', email: 'b@example.com' },
    );
    const b = await createCheckout(
      { store, creator: { partner: client, merchantId: merchant.merchantId } },
      { orderId: 'p-1', amount: '7', email: 'b@example.com' },
    );
    expect(b).toMatchObject({ resourceId: a.resourceId, reused: true });
  });

  it('invoices are created once per order too', async () => {
    const sandbox = await openSandbox();
    const store = new MemoryStore();
    const creator = { client: merchantClient(sandbox) };
    const a = await createCheckout({ store, creator }, { orderId: 'inv-1', amount: '40' }, 'invoice');
    const b = await createCheckout({ store: new MemoryStore(), creator }, { orderId: 'inv-1', amount: '40' }, 'invoice');
    expect(b.resourceId).toBe(a.resourceId);
    expect((await readState(sandbox)).invoices).toHaveLength(1);
  });
});

describe('checkout routes (fastify)', () => {
  async function shop(client: CheckoutClient, allowedHosts: string[], options: { checkoutTimeoutMs?: number; store?: Store; publicUrl?: string } = {}) {
    const store = options.store ?? new MemoryStore();
    const paid: string[] = [];
    const engine = new FulfillmentEngine({ store, client, handlers: { paid: async (p) => void paid.push(p.id) } });
    let logs = '';
    const logger = createLogger({ destination: new Writable({ write: (chunk, _e, done) => ((logs += String(chunk)), done()) }) });
    const app = Fastify();
    await app.register(checkoutRoutes, {
      store,
      engine,
      creator: { client },
      redirect: { allowedHosts, allowLoopbackHttp: true },
      publicUrl: 'https://shop.example',
      logger,
      ...options,
    });
    return { app, store, paid, logs: () => logs };
  }

  it("sends the buyer back under the public URL's path: a shop at https://shop.example/shop gets /shop/checkout/return", async () => {
    const sandbox = await openSandbox();
    for (const [publicUrl, orderId, back] of [
      ['https://shop.example/shop', 'r-path', 'https://shop.example/shop/'],
      ['https://shop.example/shop/', 'r-slash', 'https://shop.example/shop/'],
      ['https://shop.example', 'r-root', 'https://shop.example/'],
    ] as const) {
      const { app } = await shop(merchantClient(sandbox), [new URL(sandbox.url).host], { publicUrl });
      const created = await app.inject({ method: 'POST', url: '/checkout', payload: { orderId, amount: '2.50', email: 'b@example.com' } });
      expect(created.statusCode, publicUrl).toBe(303);
      const payments = (await readState(sandbox)).payments as Array<{ referenceId: string; successUrl: string; cancelUrl: string }>;
      const payment = payments.find((entry) => entry.referenceId === orderId);
      const returnPage = `${back}checkout/return?orderId=${orderId}`;
      expect([payment?.successUrl, payment?.cancelUrl], publicUrl).toEqual([returnPage, `${returnPage}&cancelled=1`]);
      const page = await app.inject({ method: 'GET', url: `/checkout/return?orderId=${orderId}` });
      expect(page.body, publicUrl).toContain(`<a href="${back}" id="back-to-shop">`);
      await app.close();
    }
  });

  it("registered as the README shows it (no allowLoopbackHttp), sends the buyer to the sandbox's http checkout page with test keys, and never with live keys", async () => {
    const sandbox = await openSandbox();
    const allowedHosts = [new URL(sandbox.url).host];
    const mount = async (client: CheckoutClient) => {
      const store = new MemoryStore();
      const app = Fastify();
      const engine = new FulfillmentEngine({ store, client, handlers: { paid: async () => {} } });
      await app.register(checkoutRoutes, { store, engine, creator: { client }, redirect: { allowedHosts }, publicUrl: 'https://shop.example' });
      return app;
    };
    const test = await mount(merchantClient(sandbox));
    const created = await test.inject({ method: 'POST', url: '/checkout', payload: { orderId: 'readme-1', amount: '3.00', email: 'b@example.com' } });
    expect(created.statusCode, created.body).toBe(303);
    expect(created.headers.location).toMatch(new RegExp(`^${sandbox.url}/checkout/`));
    // The return page links back to the same payment page while it is pending.
    const status = await test.inject({ method: 'GET', url: '/checkout/return?orderId=readme-1', headers: { accept: 'application/json' } });
    expect(status.json()).toMatchObject({ state: 'pending', checkoutUrl: created.headers.location });
    await test.close();

    const { apiKey, signingSecret, invoiceKey } = sandbox.credentials.live.merchant;
    const live = await mount(new CheckoutClient({ baseUrl: sandbox.url, apiKey, signingSecret, invoiceKey }));
    const refused = await live.inject({ method: 'POST', url: '/checkout', payload: { orderId: 'readme-2', amount: '3.00', email: 'b@example.com' } });
    expect([refused.statusCode, refused.json().error.code]).toEqual([502, 'bad_checkout_url']);
    await live.close();
  });

  it("the framework-free handlers, given the creator, link the return page back to the sandbox's http checkout page as the checkout sent the buyer there; without it, the guard's own default hides it", async () => {
    const sandbox = await openSandbox();
    const client = merchantClient(sandbox);
    const store = new MemoryStore();
    const engine = new FulfillmentEngine({ store, client, handlers: { paid: async () => {} } });
    const options = { store, engine, creator: { client }, redirect: { allowedHosts: [new URL(sandbox.url).host] }, publicUrl: 'https://shop.example' };
    const created = await handleCheckoutRequest(options, { orderId: 'plain-1', amount: '3.00', email: 'b@example.com' });
    expect(created.status).toBe(303);
    const pageUrl = created.headers.location;
    expect(pageUrl).toMatch(new RegExp(`^${sandbox.url}/checkout/`));
    const back = await handleReturnRequest(options, { orderId: 'plain-1' }, true);
    expect(back.body).toMatchObject({ state: 'pending', checkoutUrl: pageUrl });
    const { creator: _creator, ...withoutCreator } = options;
    const unguarded = await handleReturnRequest(withoutCreator, { orderId: 'plain-1' }, true);
    expect(unguarded.body).toMatchObject({ state: 'pending', checkoutUrl: undefined });
  });

  it('POST /checkout (JSON or form) answers 303 to checkoutUrl; return confirms and fulfils once', async () => {
    const sandbox = await openSandbox();
    const { app, paid } = await shop(merchantClient(sandbox), [new URL(sandbox.url).host]);
    const created = await app.inject({ method: 'POST', url: '/checkout', payload: { orderId: 'r-1', amount: '9.99', email: 'b@example.com' } });
    expect(created.statusCode).toBe(303);
    const location = created.headers.location as string;
    expect(location.startsWith(`${sandbox.url}/checkout/`)).toBe(true);
    const form = await app.inject({
      method: 'POST',
      url: '/checkout',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'orderId=r-1&amount=9.99&email=b%40example.com&networkId=',
    });
    expect(form.statusCode).toBe(303);
    expect(form.headers.location).toBe(location);

    const pending = await app.inject({ method: 'GET', url: '/checkout/return?orderId=r-1', headers: { accept: 'application/json' } });
    expect(pending.json()).toMatchObject({ orderId: 'r-1', state: 'pending', outcome: 'pending' });
    const paymentId = location.split('/').pop()!;
    expect((await simulate(sandbox, `/sandbox/payments/${paymentId}/deposit`, { amount: '9.99' })).status).toBe(200);
    for (let i = 0; i < 3; i += 1) {
      const confirmed = await app.inject({ method: 'GET', url: '/checkout/return?orderId=r-1', headers: { accept: 'application/json' } });
      expect(confirmed.json()).toMatchObject({ state: 'paid', outcome: 'paid', amountReceived: '9.99' });
    }
    expect(paid).toEqual([paymentId]);
    const page = await app.inject({ method: 'GET', url: '/checkout/return?orderId=r-1' });
    expect(page.headers['content-type']).toContain('text/html');
    expect(page.body).toContain('data-state="paid"');
    // Styled for a phone like the shop's pages, with the way back to the shop.
    expect(page.body).toContain('<meta name="viewport" content="width=device-width, initial-scale=1">');
    expect(page.body).toContain('<a href="https://shop.example/" id="back-to-shop">Back to the shop</a>');
    await app.close();
  });

  it('never redirects off the allow-list: 502 and a clear log line', async () => {
    const sandbox = await openSandbox();
    const { app, logs } = await shop(merchantClient(sandbox), ['pay.example.com']);
    const response = await app.inject({ method: 'POST', url: '/checkout', payload: { orderId: 'r-2', amount: '1' } });
    expect(response.statusCode).toBe(502);
    expect(response.headers.location).toBeUndefined();
    expect(response.json()).toMatchObject({ error: { code: 'bad_checkout_url' } });
    expect(logs()).toMatch(/Refusing to redirect to .*not in the allow-list/);
    // The rejected URL is never kept, so the return page cannot show it either.
    const back = await app.inject({ method: 'GET', url: '/checkout/return?orderId=r-2', headers: { accept: 'application/json' } });
    expect(back.body).not.toContain(sandbox.url);
    await app.close();
  });

  it('bad requests get the error object', async () => {
    const sandbox = await openSandbox();
    const { app } = await shop(merchantClient(sandbox), [new URL(sandbox.url).host]);
    const missing = await app.inject({ method: 'POST', url: '/checkout', payload: { amount: '1' } });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().error).toEqual({ code: 'invalid_request', message: 'Invalid checkout request (orderId: required, as text).' });
    // Each field says what it wants, in words a shop's developer reads without knowing the validator.
    const invalid = await app.inject({ method: 'POST', url: '/checkout', payload: { orderId: '', amount: 10, email: 5, networkId: 'bsc' } });
    expect(invalid.statusCode).toBe(400);
    expect(invalid.json().error.message).toBe(
      'Invalid checkout request (orderId: must not be empty; amount: required, as a decimal string such as "10.00"; email: must be text; networkId: must be a whole number, such as 56).',
    );
    const unknown = await app.inject({ method: 'GET', url: '/checkout/return?orderId=nope', headers: { accept: 'application/json' } });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error.code).toBe('not_found');
    // In a plain fastify app too (not only inside serve): fastify's own errors on these routes are
    // the spec's error object, and a body that is neither JSON nor a form is a 415.
    const post = (payload: string, contentType: string) => app.inject({ method: 'POST', url: '/checkout', headers: { 'content-type': contentType }, payload });
    const badJson = await post('{', 'application/json');
    expect([badJson.statusCode, Object.keys(badJson.json()), badJson.json().error.code]).toEqual([400, ['error'], 'invalid_request']);
    for (const contentType of ['text/plain', 'application/xml']) {
      const other = await post('orderId=1', contentType);
      expect([other.statusCode, Object.keys(other.json()), other.json().error.code]).toEqual([415, ['error'], 'unsupported_media_type']);
    }
    await app.close();
  });

  it('an order or tenant id with NUL or a lone surrogate is a 400: the store would keep it as U+FFFD, merging it with another order', async () => {
    const sandbox = await openSandbox();
    const { app } = await shop(merchantClient(sandbox), [new URL(sandbox.url).host]);
    const postJson = (payload: string) => app.inject({ method: 'POST', url: '/checkout', headers: { 'content-type': 'application/json' }, payload });
    for (const payload of [
      '{"orderId":"b\\ud800","amount":"5"}',
      '{"orderId":"b\\udfff","amount":"5"}',
      '{"orderId":"1","tenantId":"t\\ud800","amount":"5"}',
      '{"orderId":"b\\u0000","amount":"5"}',
    ]) {
      const refused = await postJson(payload);
      expect([refused.statusCode, refused.json().error.code], payload).toEqual([400, 'invalid_request']);
    }
    // A well-formed pair (an astral character) is an order id like any other.
    const astral = await postJson('{"orderId":"b\\ud83d\\ude00","amount":"5"}');
    expect(astral.statusCode).toBe(303);
    expect((await readState(sandbox)).payments).toHaveLength(1);
    await app.close();
  });

  it('a store that cannot take the write (another connection holds its write lock) is 503 store_unavailable with Retry-After, not 500; once free, the retry creates the one payment', async () => {
    const sandbox = await openSandbox();
    const dir = await tempDir('ck-checkout-busy-');
    const store = new SqliteStore({ dir, busyTimeoutMs: 50 });
    await store.open();
    const { app, logs } = await shop(merchantClient(sandbox), [new URL(sandbox.url).host], { store });
    const holder = loadDriver().open(join(dir, 'store.sqlite'));
    holder.exec('BEGIN IMMEDIATE');
    const order = { orderId: 'o-busy', amount: '3', email: 'b@example.com' };
    const busy = await app.inject({ method: 'POST', url: '/checkout', payload: order });
    expect([busy.statusCode, busy.headers['retry-after'], busy.json().error.code]).toEqual([503, '5', 'store_unavailable']);
    expect(logs()).toContain('checkout: the store failed');
    holder.exec('COMMIT');
    holder.close();
    expect((await app.inject({ method: 'POST', url: '/checkout', payload: order })).statusCode).toBe(303);
    expect(await paymentsAtService(sandbox, 'o-busy')).toBe(1);
    await app.close();
    await store.close();
  });

  it.skipIf(!DATABASE_URL)(
    'on PostgreSQL, a write that waits past its statement timeout (the table locked elsewhere) is 503 store_unavailable too; once free, the retry creates the one payment; a table dropped by hand is 500',
    async () => {
      const sandbox = await openSandbox();
      const databases = new TestDatabases();
      const store = await databases.store({ statementTimeoutMs: 200 });
      await store.open();
      const { app } = await shop(merchantClient(sandbox), [new URL(sandbox.url).host], { store });
      const holder = new pg.Client({ connectionString: DATABASE_URL });
      await holder.connect();
      try {
        await holder.query('BEGIN');
        await holder.query(`LOCK TABLE "${store.schema}".checkout_attempts IN ACCESS EXCLUSIVE MODE`);
        const order = { orderId: 'o-pg-busy', amount: '3', email: 'b@example.com' };
        const busy = await app.inject({ method: 'POST', url: '/checkout', payload: order });
        expect([busy.statusCode, busy.headers['retry-after'], busy.json().error.code]).toEqual([503, '5', 'store_unavailable']);
        await holder.query('ROLLBACK');
        expect((await app.inject({ method: 'POST', url: '/checkout', payload: order })).statusCode).toBe(303);
        expect(await paymentsAtService(sandbox, 'o-pg-busy')).toBe(1);
        // A failure that does not pass by itself (a table dropped by hand) is no reason to come back: 500.
        await holder.query(`DROP TABLE "${store.schema}".checkout_attempts`);
        const broken = await app.inject({ method: 'POST', url: '/checkout', payload: { ...order, orderId: 'o-pg-broken' } });
        expect([broken.statusCode, broken.headers['retry-after'], broken.json().error.code]).toEqual([500, undefined, 'internal_error']);
      } finally {
        await holder.end();
        await app.close();
        await store.close();
        await databases.dispose();
      }
    },
  );

  it('POST /checkout gives up on a service that does not answer at checkoutTimeoutMs: 503, the attempt kept, and the retry gets the payment', async () => {
    // The service holds every request while `hung`, and creates the payment asked for otherwise.
    let hung = true;
    const service = await creatingService(
      (asked) => ({ ...asked, checkoutUrl: 'http://127.0.0.1:9/checkout/1' }),
      () => hung,
    );
    const { app, store } = await shop(new CheckoutClient({ ...TEST_KEYS, baseUrl: service.url }), ['127.0.0.1:9'], { checkoutTimeoutMs: 500 });
    try {
      const late = await app.inject({ method: 'POST', url: '/checkout', payload: { orderId: 'o-slow', amount: '3.00' } });
      expect([late.statusCode, late.json()]).toEqual([
        503,
        {
          error: {
            code: 'service_unreachable',
            message: 'The payment service did not answer in time for order o-slow; try again in a moment (the order keeps its one payment).',
          },
        },
      ]);
      expect(await store.getCheckoutAttempt('o-slow')).toMatchObject({ status: 'sending' });
      hung = false;
      const retried = await app.inject({ method: 'POST', url: '/checkout', payload: { orderId: 'o-slow', amount: '3.00' } });
      expect([retried.statusCode, retried.headers.location]).toEqual([303, 'http://127.0.0.1:9/checkout/1']);
    } finally {
      await app.close();
      await service.close();
    }
  });
});

import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryStore } from '../../../src/store/memory-store.js';
import { checkoutWebhooks, createReceiver, type ReceiverOptions } from '../../../src/webhooks/index.js';
import { captureLogger, paymentEvent, SECRET, signedEvent } from '../helpers.js';

const apps: Array<{ close(): Promise<unknown> }> = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

async function build(options: Partial<ReceiverOptions> = {}, path?: string) {
  const store = new MemoryStore();
  const receiver = createReceiver({ store, secrets: SECRET, logger: captureLogger(), ...options });
  const app = Fastify();
  apps.push(app);
  // The merchant's own JSON route, next to the webhook plugin.
  app.post('/orders', async (request) => ({ parsed: request.body, isBuffer: Buffer.isBuffer(request.body) }));
  await app.register(checkoutWebhooks, { receiver, ...(path ? { path } : {}) });
  return { app, store, receiver };
}

describe('checkoutWebhooks fastify plugin', () => {
  it('verifies the raw body, stores the event and answers 200', async () => {
    const { app, store } = await build();
    const event = paymentEvent();
    const delivery = signedEvent(event);
    const response = await app.inject({ method: 'POST', url: '/webhooks/checkout', headers: delivery.headers, payload: delivery.body });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ received: true, id: event.id, duplicate: false });
    expect((await store.getEvent(event.id))?.body).toBe(delivery.body);
  });

  it("leaves the app's JSON parser alone on other routes", async () => {
    const { app } = await build();
    const response = await app.inject({ method: 'POST', url: '/orders', headers: { 'content-type': 'application/json' }, payload: '{"orderId":"o-1"}' });
    expect(response.json()).toEqual({ parsed: { orderId: 'o-1' }, isBuffer: false });
  });

  it('answers 401 for a re-indented body, with the error object', async () => {
    const { app, store } = await build();
    const delivery = signedEvent();
    const response = await app.inject({
      method: 'POST',
      url: '/webhooks/checkout',
      headers: delivery.headers,
      payload: JSON.stringify(JSON.parse(delivery.body), null, 2),
    });
    expect(response.statusCode).toBe(401);
    expect(response.json()).toMatchObject({ error: { code: 'invalid_signature' } });
    expect(await store.listEvents()).toHaveLength(0);
  });

  it('answers 413 with the error object when fastify stops reading at the limit, storing nothing', async () => {
    const { app, store } = await build({ maxBodyBytes: 512 });
    const delivery = signedEvent({ ...paymentEvent(), padding: 'x'.repeat(1000) });
    const response = await app.inject({ method: 'POST', url: '/webhooks/checkout', headers: delivery.headers, payload: delivery.body });
    expect(response.statusCode).toBe(413);
    expect(response.json()).toMatchObject({ error: { code: 'payload_too_large', message: expect.stringContaining('512') } });
    expect(await store.listEvents()).toHaveLength(0);
  });

  it('answers 415 for a non-JSON content type and 400 for missing headers', async () => {
    const { app } = await build();
    const delivery = signedEvent();
    const text = await app.inject({
      method: 'POST',
      url: '/webhooks/checkout',
      headers: { ...delivery.headers, 'content-type': 'text/plain' },
      payload: delivery.body,
    });
    expect([text.statusCode, text.json().error.code]).toEqual([415, 'unsupported_media_type']);
    const bare = await app.inject({ method: 'POST', url: '/webhooks/checkout', headers: { 'content-type': 'application/json' }, payload: delivery.body });
    expect([bare.statusCode, bare.json().error.code]).toEqual([400, 'missing_signature_headers']);
    const empty = await app.inject({ method: 'POST', url: '/webhooks/checkout' });
    expect([empty.statusCode, empty.json().error.code]).toEqual([400, 'missing_signature_headers']);
  });

  it('answers 415 unsupported_media_type, storing nothing, for a content type fastify cannot parse', async () => {
    const { app, store } = await build();
    const delivery = signedEvent();
    for (const contentType of ['a', 'application/', ';;;==', 'application/json,text/plain']) {
      const response = await app.inject({
        method: 'POST',
        url: '/webhooks/checkout',
        headers: { ...delivery.headers, 'content-type': contentType },
        payload: delivery.body,
      });
      expect([response.statusCode, response.json()], contentType).toEqual([
        415,
        { error: { code: 'unsupported_media_type', message: `Webhook content type must be application/json, got "${contentType}".` } },
      ]);
    }
    expect(await store.listEvents()).toHaveLength(0);
  });

  it('answers every other method on the route with 405 method_not_allowed and Allow: POST, storing nothing', async () => {
    const { app, store } = await build();
    for (const method of ['GET', 'HEAD', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const) {
      const response = await app.inject({ method, url: '/webhooks/checkout' });
      expect([response.statusCode, response.headers.allow], method).toEqual([405, 'POST']);
      if (method !== 'HEAD')
        expect(response.json(), method).toEqual({ error: { code: 'method_not_allowed', message: `Webhooks are delivered with POST, got ${method}.` } });
    }
    expect(await store.listEvents()).toHaveLength(0);
  });

  it('serves a custom path', async () => {
    const { app } = await build({}, '/hooks/pay');
    const delivery = signedEvent();
    const response = await app.inject({ method: 'POST', url: '/hooks/pay', headers: delivery.headers, payload: delivery.body });
    expect(response.statusCode).toBe(200);
  });

  it('starts the receiver when ready (dispatching what a crash left) and stops it on close', async () => {
    const store = new MemoryStore();
    const stored = createReceiver({ store, secrets: SECRET, logger: captureLogger(), dispatch: false });
    const event = paymentEvent();
    await stored.handle(signedEvent(event));

    const receiver = createReceiver({ store, secrets: SECRET, logger: captureLogger() });
    const seen: string[] = [];
    receiver.on('payment.paid', (e) => void seen.push(e.id));
    const app = Fastify();
    await app.register(checkoutWebhooks, { receiver });
    await app.ready();
    await app.close();
    expect(seen).toEqual([event.id]);
    expect((await store.getRun(`event:${event.id}`))?.status).toBe('done');
  });
});

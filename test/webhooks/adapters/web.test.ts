import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../../../src/store/memory-store.js';
import { createReceiver, createWebHandler } from '../../../src/webhooks/index.js';
import { captureLogger, paymentEvent, SECRET, signedEvent } from '../helpers.js';

const URL_ = 'https://shop.example/webhooks/checkout';

function setup(maxBodyBytes?: number) {
  const store = new MemoryStore();
  const receiver = createReceiver({ store, secrets: SECRET, logger: captureLogger(), ...(maxBodyBytes ? { maxBodyBytes } : {}) });
  return { store, handler: createWebHandler(receiver) };
}

describe('createWebHandler (Request -> Response)', () => {
  it('stores a signed delivery and answers 200 JSON', async () => {
    const { store, handler } = setup();
    const event = paymentEvent();
    const delivery = signedEvent(event);
    const response = await handler(new Request(URL_, { method: 'POST', headers: delivery.headers, body: delivery.body }));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await response.json()).toEqual({ received: true, id: event.id, duplicate: false });
    expect((await store.getEvent(event.id))?.body).toBe(delivery.body);
  });

  it('answers 401 for a bad signature', async () => {
    const { handler } = setup();
    const delivery = signedEvent();
    const response = await handler(new Request(URL_, { method: 'POST', headers: delivery.headers, body: `${delivery.body}\n` }));
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ error: { code: 'invalid_signature' } });
  });

  it('says so when the body was already read', async () => {
    const { handler } = setup();
    const delivery = signedEvent();
    const request = new Request(URL_, { method: 'POST', headers: delivery.headers, body: delivery.body });
    await request.json();
    const response = await handler(request);
    expect(response.status).toBe(500);
    expect(await response.json()).toMatchObject({ error: { code: 'raw_body_required', message: expect.stringContaining('untouched Request') } });
  });

  it('answers 413 from Content-Length and from a stream past the limit, storing nothing', async () => {
    const { store, handler } = setup(1024);
    const delivery = signedEvent({ ...paymentEvent(), padding: 'x'.repeat(4096) });
    const declared = await handler(
      new Request(URL_, { method: 'POST', headers: { ...delivery.headers, 'content-length': String(delivery.body.length) }, body: delivery.body }),
    );
    expect(declared.status).toBe(413);
    const bytes = new TextEncoder().encode(delivery.body);
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < bytes.length; i += 256) controller.enqueue(bytes.subarray(i, i + 256));
        controller.close();
      },
    });
    const streamed = await handler(new Request(URL_, { method: 'POST', headers: delivery.headers, body: stream, duplex: 'half' } as RequestInit));
    expect(streamed.status).toBe(413);
    expect(await streamed.json()).toMatchObject({ error: { code: 'payload_too_large' } });
    expect(await store.listEvents()).toHaveLength(0);
  });

  it('answers 405 to GET', async () => {
    const { handler } = setup();
    const response = await handler(new Request(URL_));
    expect(response.status).toBe(405);
  });
});

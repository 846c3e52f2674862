import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryStore } from '../../../src/store/memory-store.js';
import { createNodeHandler, createReceiver } from '../../../src/webhooks/index.js';
import { captureLogger, paymentEvent, SECRET, signedEvent } from '../helpers.js';

type Middleware = (req: IncomingMessage & { body?: unknown; _body?: boolean }, res: ServerResponse, next: () => void) => void;

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

/** A real loopback server: optional Express-style middleware, then the webhook handler. */
async function serve(before?: Middleware, maxBodyBytes?: number) {
  const store = new MemoryStore();
  const receiver = createReceiver({ store, secrets: SECRET, logger: captureLogger(), ...(maxBodyBytes ? { maxBodyBytes } : {}) });
  const handler = createNodeHandler(receiver);
  const server = createServer((req, res) => {
    if (before) before(req, res, () => void handler(req, res));
    else void handler(req, res);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/checkout`;
  return { url, store, receiver };
}

function readAll(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** What express.json() does: parse, set req.body, mark req._body. */
const jsonParser: Middleware = (req, _res, next) =>
  void readAll(req).then((buffer) => {
    req.body = JSON.parse(buffer.toString('utf8'));
    req._body = true;
    next();
  });

/** What express.raw({ type: 'application/json' }) does. */
const rawParser: Middleware = (req, _res, next) =>
  void readAll(req).then((buffer) => {
    req.body = buffer;
    req._body = true;
    next();
  });

/** Express 4's json() on a request it does not parse: `req.body = {}`, stream untouched. */
const skippedParser: Middleware = (req, _res, next) => {
  req.body = {};
  next();
};

describe('createNodeHandler on a real http server', () => {
  it('stores a signed delivery and answers 200 JSON', async () => {
    const { url, store } = await serve();
    const event = paymentEvent();
    const delivery = signedEvent(event);
    const response = await fetch(url, { method: 'POST', headers: delivery.headers, body: delivery.body });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await response.json()).toEqual({ received: true, id: event.id, duplicate: false });
    expect((await store.getEvent(event.id))?.body).toBe(delivery.body);
  });

  it('fails clearly when express.json() already parsed the body', async () => {
    const { url, store } = await serve(jsonParser);
    const delivery = signedEvent();
    const response = await fetch(url, { method: 'POST', headers: delivery.headers, body: delivery.body });
    expect(response.status).toBe(500);
    const { error } = (await response.json()) as { error: { code: string; message: string } };
    expect(error.code).toBe('raw_body_required');
    expect(error.message).toContain('already parsed');
    expect(error.message).toContain('before express.json()');
    expect(error.message).toContain("express.raw({ type: 'application/json' })");
    expect(await store.listEvents()).toHaveLength(0);
  });

  it('fails clearly when a middleware read the body and kept nothing, naming the fixes that work after it', async () => {
    const draining: Middleware = (req, _res, next) => void readAll(req).then(() => next());
    const { url, store } = await serve(draining);
    const delivery = signedEvent();
    const response = await fetch(url, { method: 'POST', headers: delivery.headers, body: delivery.body });
    expect(response.status).toBe(500);
    const { error } = (await response.json()) as { error: { code: string; message: string } };
    expect(error.code).toBe('raw_body_required');
    expect(error.message).toContain('already read by another middleware');
    // express.raw on the route comes too late after such a middleware; keeping the bytes works after any.
    expect(error.message).toContain("express.raw({ type: 'application/json' }) instead of them");
    expect(error.message).toContain('keep the bytes as req.rawBody');
    expect(await store.listEvents()).toHaveLength(0);
  });

  it('works behind express.raw() and behind a body parser that skipped the request', async () => {
    for (const before of [rawParser, skippedParser]) {
      const { url, store } = await serve(before);
      const event = paymentEvent();
      const delivery = signedEvent(event);
      const response = await fetch(url, { method: 'POST', headers: delivery.headers, body: delivery.body });
      expect(response.status).toBe(200);
      expect(await store.getEvent(event.id)).toBeDefined();
    }
  });

  it('answers 413 from Content-Length and from a chunked body past the limit', async () => {
    const { url, store } = await serve(undefined, 1024);
    const delivery = signedEvent({ ...paymentEvent(), padding: 'x'.repeat(4096) });
    const declared = await fetch(url, { method: 'POST', headers: delivery.headers, body: delivery.body });
    expect(declared.status).toBe(413);
    expect(await declared.json()).toMatchObject({ error: { code: 'payload_too_large' } });

    const bytes = Buffer.from(delivery.body);
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < bytes.length; i += 256) controller.enqueue(bytes.subarray(i, i + 256));
        controller.close();
      },
    });
    const chunked = await fetch(url, { method: 'POST', headers: delivery.headers, body: stream, duplex: 'half' } as RequestInit);
    expect(chunked.status).toBe(413);
    expect(await store.listEvents()).toHaveLength(0);
  });

  it('answers 405 to other methods', async () => {
    const { url } = await serve();
    const response = await fetch(url);
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('POST');
    expect(await response.json()).toMatchObject({ error: { code: 'method_not_allowed' } });
  });
});

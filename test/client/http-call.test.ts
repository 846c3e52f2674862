import { randomUUID } from 'node:crypto';
import { getEventListeners } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CheckoutClient, type HttpCallRecord } from '../../src/client/index.js';
import { MAX_ANSWER_CHARS, nodeHttpCall } from '../../src/client/http-call.js';
import { ApiError, InvalidResponseError, NetworkError, TimeoutError } from '../../src/errors/index.js';
import { TEST_KEYS, samplePayment } from '../support/fixtures.js';

/** A real service stand-in on loopback: `answer` handles every request; sockets are counted. */
async function service(answer: (request: IncomingMessage, response: ServerResponse) => void): Promise<{ url: string; sockets: () => number; server: Server }> {
  let sockets = 0;
  const server = createServer(answer);
  server.on('connection', () => (sockets += 1));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, sockets: () => sockets, server };
}

/** A service that sends the headers and half a body, then nothing: the deadline covers the whole exchange, not only its start. */
async function stalledService(): Promise<{ url: string; answering: () => number; closed: () => number }> {
  let answering = 0;
  let closed = 0;
  const stub = await service((request, response) => {
    request.socket.on('close', () => (closed += 1));
    response.writeHead(200, { 'content-type': 'application/json' });
    response.write('{"id":', () => (answering += 1));
  });
  return { url: stub.url, answering: () => answering, closed: () => closed };
}

const servers: Server[] = [];
afterEach(async () => {
  vi.unstubAllGlobals();
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

const ID = randomUUID();

const json = (response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(JSON.stringify(body));
};

describe('the client over Node http (the default)', () => {
  it('sends through Node http, not global fetch, and keeps one connection alive across calls', async () => {
    const payment = samplePayment();
    const stub = await service((_request, response) => json(response, 200, payment));
    vi.stubGlobal('fetch', () => Promise.reject(new Error('global fetch must not be used')));
    const client = new CheckoutClient({ baseUrl: stub.url, ...TEST_KEYS, maxRps: 1000 });
    for (let i = 0; i < 20; i += 1) expect(await client.payments.get(payment.id)).toEqual(payment);
    expect(stub.sockets()).toBe(1);
  });

  it('tells onCall of every exchange, retries and failures included', async () => {
    let n = 0;
    const stub = await service((_request, response) =>
      ++n === 1 ? json(response, 503, { error: { code: 'unavailable', message: 'later' } }) : json(response, 200, samplePayment()),
    );
    const calls: HttpCallRecord[] = [];
    const client = new CheckoutClient({ baseUrl: stub.url, ...TEST_KEYS, minRetryDelayMs: 1, onCall: (call) => calls.push(call) });
    await client.payments.get(ID);
    const dead = new CheckoutClient({ baseUrl: 'http://127.0.0.1:9', ...TEST_KEYS, retries: 0, onCall: (call) => calls.push(call) });
    await expect(dead.payments.get(ID)).rejects.toBeInstanceOf(NetworkError);
    expect(calls.map(({ method, status }) => `${method} ${status}`)).toEqual(['GET 503', 'GET 200', 'GET error']);
    expect(calls[0]!.url).toBe(`${stub.url}/v1/payments/${ID}`);
  });

  it('an answer cut off mid-body is a NetworkError, and retried', async () => {
    let n = 0;
    const body = JSON.stringify(samplePayment());
    const stub = await service((_request, response) => {
      if (++n === 1) {
        response.writeHead(200, { 'content-type': 'application/json', 'content-length': String(body.length) });
        response.write(body.slice(0, 20));
        setTimeout(() => response.socket?.destroy(), 10);
        return;
      }
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(body);
    });
    const client = new CheckoutClient({ baseUrl: stub.url, ...TEST_KEYS, minRetryDelayMs: 1 });
    expect(await client.payments.get(ID)).toEqual(JSON.parse(body));
    const once = new CheckoutClient({ baseUrl: stub.url, ...TEST_KEYS, retries: 0 });
    n = 0;
    await expect(once.payments.get(ID)).rejects.toBeInstanceOf(NetworkError);
  });

  it('does not follow redirects: a 3xx is an ApiError naming its status', async () => {
    const stub = await service((_request, response) => {
      response.writeHead(302, { location: 'http://127.0.0.1:9/elsewhere' });
      response.end();
    });
    const error = await new CheckoutClient({ baseUrl: stub.url, ...TEST_KEYS, retries: 0 }).payments.get(ID).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).status).toBe(302);
  });

  it('reads Retry-After from the answer (one 429 slows the next call)', async () => {
    let n = 0;
    const stub = await service((_request, response) =>
      ++n === 1 ? json(response, 429, { error: { code: 'rate_limited', message: 'slow down' } }, { 'retry-after': '7' }) : json(response, 200, samplePayment()),
    );
    const client = new CheckoutClient({ baseUrl: stub.url, ...TEST_KEYS, retries: 0 });
    const error = await client.payments.get(ID).catch((caught: unknown) => caught);
    expect((error as ApiError).retryAfterMs).toBe(7000);
  });

  it('sends once more on a new connection when the server had closed the kept-alive one (even with retries: 0)', async () => {
    const payment = samplePayment();
    const perSocket = new Map<unknown, number>();
    const stub = await service((request, response) => {
      const n = (perSocket.get(request.socket) ?? 0) + 1;
      perSocket.set(request.socket, n);
      // A server that drops idle connections without saying so: the second request on one finds it gone.
      if (n === 2) return void request.socket.destroy();
      json(response, 200, payment);
    });
    const client = new CheckoutClient({ baseUrl: stub.url, ...TEST_KEYS, retries: 0, maxRps: 1000 });
    expect(await client.payments.get(payment.id)).toEqual(payment);
    expect(await client.payments.get(payment.id)).toEqual(payment);
    expect(stub.sockets()).toBe(2);
  });

  it('an answer that stops coming is a TimeoutError, and the connection it held is closed', async () => {
    const stalled = await stalledService();
    const client = new CheckoutClient({ baseUrl: stalled.url, ...TEST_KEYS, retries: 0, timeoutMs: 150 });
    const error = await client.payments.get(ID).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TimeoutError);
    expect((error as Error).message).toContain('within 150 ms');
    await vi.waitFor(() => expect(stalled.closed()).toBe(1), { timeout: 30_000 });
  });

  it("a caller's abort mid-answer rejects with its reason at once, closes the connection and leaves no listener on the signal", async () => {
    const stalled = await stalledService();
    const client = new CheckoutClient({ baseUrl: stalled.url, ...TEST_KEYS, timeoutMs: 60_000 });
    const stopping = new AbortController();
    // A receiver's stop signal lives as long as the process: the call must take its listener off.
    const pending = client.payments.get(ID, { signal: stopping.signal }).catch((e: unknown) => e);
    await vi.waitFor(() => expect(stalled.answering()).toBe(1), { timeout: 30_000 });
    // The call's own deadline is a minute away: only the abort can end it within the test's time.
    stopping.abort(new Error('the receiver is stopping'));
    const error = await pending;
    expect((error as Error).message).toBe('the receiver is stopping');
    await vi.waitFor(() => expect(stalled.closed()).toBe(1), { timeout: 30_000 });
    expect(getEventListeners(stopping.signal, 'abort')).toHaveLength(0);
  });

  it("nodeHttpCall takes its listener off the attempt's signal however the exchange ends: answered, refused, aborted mid-answer, resent on a new connection", async () => {
    const call = nodeHttpCall();
    const request = (signal: AbortSignal) => ({ method: 'GET', headers: {}, body: undefined, signal });
    const listeners = (signal: AbortSignal) => getEventListeners(signal, 'abort').length;
    const answered = await service((_request, response) => json(response, 200, { ok: true }));
    const signal = new AbortController().signal;
    expect((await call(`${answered.url}/x`, request(signal))).status).toBe(200);
    expect(listeners(signal)).toBe(0);

    await expect(call('http://127.0.0.1:9/x', request(signal))).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    expect(listeners(signal)).toBe(0);

    const stalled = await stalledService();
    const aborting = new AbortController();
    const pending = call(`${stalled.url}/x`, request(aborting.signal)).catch((e: unknown) => e);
    await vi.waitFor(() => expect(stalled.answering()).toBe(1), { timeout: 30_000 });
    // The half answer is on its way: a moment for the client to take its headers in.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(listeners(aborting.signal)).toBe(1);
    aborting.abort(new Error('stopping'));
    expect(((await pending) as Error).message).toBe('stopping');
    await vi.waitFor(() => expect(stalled.closed()).toBe(1), { timeout: 30_000 });

    let second = 0;
    const dropsKeptAlive = await service((request, response) => {
      // The second request on the first connection finds it dropped: the call resends on a new one.
      if (++second === 2) return void request.socket.destroy();
      json(response, 200, { ok: true });
    });
    expect((await call(`${dropsKeptAlive.url}/x`, request(signal))).status).toBe(200);
    expect((await call(`${dropsKeptAlive.url}/x`, request(signal))).status).toBe(200);
    expect(dropsKeptAlive.sockets()).toBe(2);
    expect(listeners(signal)).toBe(0);
  });

  it('drops a leading byte order mark, and an onCall that throws does not change the outcome', async () => {
    const payment = samplePayment();
    const stub = await service((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(`\ufeff${JSON.stringify(payment)}`);
    });
    const client = new CheckoutClient({
      baseUrl: stub.url,
      ...TEST_KEYS,
      onCall: () => {
        throw new Error('observer bug');
      },
    });
    expect(await client.payments.get(payment.id)).toEqual(payment);
  });

  it('uses the fetch it is given instead', async () => {
    const payment = samplePayment();
    const seen: string[] = [];
    const client = new CheckoutClient({
      baseUrl: 'http://service.invalid',
      ...TEST_KEYS,
      fetch: async (input) => {
        seen.push(String(input));
        return new Response(JSON.stringify(payment), { status: 200, headers: { 'content-type': 'application/json' } });
      },
    });
    expect(await client.payments.get(payment.id)).toEqual(payment);
    expect(seen).toEqual([`http://service.invalid/v1/payments/${payment.id}`]);
  });

  describe('an answer longer than MAX_ANSWER_CHARS is not read whole: an InvalidResponseError, not retried', () => {
    /** A service that streams `chars` characters of a JSON string in 64 KiB writes, with no Content-Length; counts requests and what it managed to write. */
    async function endless(chars: number) {
      let requests = 0;
      let written = 0;
      const chunk = 'x'.repeat(64 * 1024);
      const stub = await service((_request, response) => {
        requests += 1;
        response.writeHead(200, { 'content-type': 'application/json' });
        response.write('{"id":"');
        const more = () => {
          while (written < chars) {
            written += chunk.length;
            if (!response.write(chunk)) return void response.once('drain', more);
          }
          response.end('"}');
        };
        response.on('error', () => undefined);
        more();
      });
      return { url: stub.url, requests: () => requests, written: () => written };
    }

    const tooLong = (error: unknown) => {
      expect(error).toBeInstanceOf(InvalidResponseError);
      expect((error as InvalidResponseError).message).toMatch(`payments.get: the service's 200 answer is longer than ${MAX_ANSWER_CHARS} characters: not read`);
      expect((error as InvalidResponseError).fields).toEqual(['(root)']);
    };

    it('over Node http: the connection is closed once the limit is passed', async () => {
      const stub = await endless(20 * MAX_ANSWER_CHARS);
      const calls: HttpCallRecord[] = [];
      const client = new CheckoutClient({ baseUrl: stub.url, ...TEST_KEYS, minRetryDelayMs: 1, onCall: (call) => calls.push(call) });
      tooLong(await client.payments.get(ID).catch((caught: unknown) => caught));
      expect([stub.requests(), calls.map((call) => call.status)]).toEqual([1, ['invalid_response']]);
      expect(stub.written()).toBeLessThan(20 * MAX_ANSWER_CHARS);
    });

    it('over Node http and over fetch: a Content-Length that says so is refused before the body is read', async () => {
      const stub = await service((_request, response) => {
        response.writeHead(200, { 'content-type': 'application/json', 'content-length': String(700 * 1024 * 1024) });
        response.write('{"id":');
      });
      tooLong(await new CheckoutClient({ baseUrl: stub.url, ...TEST_KEYS, minRetryDelayMs: 1 }).payments.get(ID).catch((caught: unknown) => caught));
      const overFetch = new CheckoutClient({ baseUrl: stub.url, ...TEST_KEYS, minRetryDelayMs: 1, fetch: (input, init) => fetch(input, init) });
      tooLong(await overFetch.payments.get(ID).catch((caught: unknown) => caught));
    });

    it('over fetch, streamed', async () => {
      const stub = await endless(2 * MAX_ANSWER_CHARS);
      const client = new CheckoutClient({ baseUrl: stub.url, ...TEST_KEYS, minRetryDelayMs: 1, fetch: (input, init) => fetch(input, init) });
      tooLong(await client.payments.get(ID).catch((caught: unknown) => caught));
      expect(stub.requests()).toBe(1);
    });

    it('one just under the limit is read', async () => {
      const payment = { ...samplePayment(), metadata: { note: 'x'.repeat(MAX_ANSWER_CHARS - 10_000) } };
      const stub = await service((_request, response) => json(response, 200, payment));
      expect((await new CheckoutClient({ baseUrl: stub.url, ...TEST_KEYS }).payments.get(payment.id)).id).toBe(payment.id);
    });
  });
});

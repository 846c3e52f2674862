import { connect } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { SPEC_ERROR_OPTIONS } from '../../src/fastify/error-replies.js';
import { listenOnLoopback } from '../support/ports.js';

const apps: FastifyInstance[] = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

/** Send the head of a POST and the first byte of its body, then nothing: what came back before the server closed. */
function trickle(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => resolve(text));
    socket.write('POST /webhooks/checkout HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{');
  });
}

describe('SPEC_ERROR_OPTIONS', () => {
  it('gives every request 30 s to arrive whole: fastify alone waits for ever', async () => {
    const app = Fastify({ ...SPEC_ERROR_OPTIONS });
    apps.push(app);
    await app.ready();
    expect([app.server.requestTimeout, app.server.headersTimeout]).toEqual([30_000, 30_000]);
  });

  it('a body that stops arriving is answered 408 request_timeout, the spec error object, and its connection closed', async () => {
    // A short timeout, checked often, stands in for 30 s checked every 30 s.
    const app = Fastify({ ...SPEC_ERROR_OPTIONS, requestTimeout: 200, http: { connectionsCheckingInterval: 50 } });
    apps.push(app);
    app.post('/webhooks/checkout', async () => ({ ok: true }));
    const answer = await trickle(await listenOnLoopback(app));
    expect(answer).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({
      error: { code: 'request_timeout', message: 'The request did not arrive in time.' },
    });
  });
});

import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, openShop } from '../sandbox/helpers.js';
import { sandboxEnv, spawnCli, terminateAll, waitForLine } from '../support/cli.js';
import { freePort } from '../support/ports.js';

const children: Array<ReturnType<typeof spawnCli>> = [];
afterEach(async () => {
  await terminateAll(children);
  await cleanup();
});

/** Send `request` as raw bytes; resolve with the status and the body of what came back before the server closed or answered. */
function raw(port: number, request: string): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    socket.setEncoding('latin1');
    // A request the server answers and keeps alive: close our side once the whole answer is in
    // (on a fixed timer, a slow server saw our FIN first and dropped the request unanswered).
    socket.on('data', (chunk: string) => {
      text += chunk;
      const split = text.indexOf('\r\n\r\n');
      const length = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, split))?.[1];
      if (split >= 0 && length !== undefined && Buffer.byteLength(text.slice(split + 4), 'latin1') >= Number(length)) socket.end();
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      const [head = '', body = ''] = text.split('\r\n\r\n');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]);
      try {
        resolve({ status, body: JSON.parse(body) });
      } catch {
        reject(new Error(`not a JSON answer: ${JSON.stringify(text.slice(0, 300))}`));
      }
    });
    socket.write(request);
    // An answer with no length: the server closes, or we do after a while.
    setTimeout(() => socket.end(), 10_000).unref();
  });
}

/** `{ error: { code, message } }` with that code and some message. */
const specError = (code: string) => ({ error: { code, message: expect.any(String) } });

const HANDLERS = 'export default { async paid() {} };\n';

describe('bad HTTP gets the spec error object from the processes a merchant runs', () => {
  it('serve: fastify’s own errors on POST /checkout, a URL that does not decode, bytes that are not HTTP, huge headers, no Host', async () => {
    const { dir, port, sandbox } = await openShop('ck-serve-errors-', HANDLERS);
    const serve = spawnCli(['serve', '--port', String(port)], { cwd: dir, env: sandboxEnv(sandbox) });
    children.push(serve);
    await waitForLine(serve, /listening on/);
    const base = `http://127.0.0.1:${port}`;
    const post = (body: string, contentType: string) => fetch(`${base}/checkout`, { method: 'POST', headers: { 'content-type': contentType }, body });

    const badJson = await post('{', 'application/json');
    expect(badJson.status).toBe(400);
    expect(await badJson.json()).toEqual(specError('invalid_request'));
    const xml = await post('<order/>', 'text/xml');
    expect(xml.status).toBe(415);
    expect(await xml.json()).toEqual(specError('unsupported_media_type'));
    // text/plain too (fastify parses it by default: it was a 400 'expected object').
    const text = await post('orderId=1', 'text/plain');
    expect([text.status, await text.json()]).toEqual([415, specError('unsupported_media_type')]);
    // Declared over the limit: answered before the body is read (a client still writing it would
    // see the connection close under it, so the body is not sent).
    expect(await raw(port, 'POST /checkout HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 2097152\r\n\r\n{')).toEqual({
      status: 413,
      body: specError('payload_too_large'),
    });
    // Bytes that are not UTF-8 would otherwise decode to U+FFFD: two such order ids, one order.
    const notUtf8 = Buffer.concat([Buffer.from('{"orderId":"'), Buffer.from([0xff, 0xfe]), Buffer.from('","amount":"10","email":"b@example.com"}')]);
    const lossy = await fetch(`${base}/checkout`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/json' },
      body: new Uint8Array(notUtf8),
    });
    expect(lossy.status).toBe(400);
    expect(await lossy.json()).toEqual({ error: { code: 'invalid_request', message: 'The request body is not valid UTF-8' } });
    // The same through a form, as raw bytes and as a %-escape.
    for (const form of [
      Buffer.concat([Buffer.from('orderId='), Buffer.from([0xff]), Buffer.from('&amount=10&email=b%40example.com')]),
      Buffer.from('orderId=%FE&amount=10&email=b%40example.com'),
    ]) {
      const answer = await fetch(`${base}/checkout`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new Uint8Array(form),
      });
      expect(answer.status, form.toString('latin1')).toBe(400);
      expect(await answer.json()).toEqual({ error: { code: 'invalid_request', message: 'The request body is not valid UTF-8' } });
    }
    const badUrl = await fetch(`${base}/checkout/%zz`);
    expect(badUrl.status).toBe(400);
    expect(await badUrl.json()).toEqual(specError('invalid_request'));
    // A served path asked with another method says which methods it takes; an unknown path is a 404.
    const getCheckout = await fetch(`${base}/checkout`);
    expect([getCheckout.status, getCheckout.headers.get('allow'), await getCheckout.json()]).toEqual([
      405,
      'POST',
      { error: { code: 'method_not_allowed', message: 'GET /checkout is not served: use POST.' } },
    ]);
    const postHealth = await fetch(`${base}/healthz`, { method: 'POST' });
    expect([postHealth.status, postHealth.headers.get('allow'), await postHealth.json()]).toEqual([405, 'GET, HEAD', specError('method_not_allowed')]);
    const nowhere = await fetch(`${base}/nowhere`, { method: 'POST' });
    expect([nowhere.status, await nowhere.json()]).toEqual([404, { error: { code: 'not_found', message: 'No route POST /nowhere.' } }]);

    expect(await raw(port, 'NOT HTTP AT ALL\r\n\r\n')).toEqual({ status: 400, body: specError('invalid_request') });
    expect(await raw(port, `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`)).toEqual({ status: 431, body: specError('headers_too_large') });
    // HTTP/1.1 requires Host; HTTP/1.0 may leave it out.
    expect(await raw(port, 'GET /healthz HTTP/1.1\r\n\r\n')).toEqual({ status: 400, body: specError('invalid_request') });
    expect(await raw(port, 'GET /healthz HTTP/1.0\r\n\r\n')).toEqual({ status: 200, body: { ok: true } });
    // Still serving, and the webhook route's own errors are unchanged.
    const unsigned = await fetch(`${base}/webhooks/checkout`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(unsigned.status).toBeGreaterThanOrEqual(400);
    expect(unsigned.status).toBeLessThan(500);
    expect(await unsigned.json()).toMatchObject({ error: { code: expect.any(String) } });
  });

  it('console: fastify’s own errors outside the console’s pages, a URL that does not decode, no Host', async () => {
    const { dir } = await openShop('ck-console-errors-', HANDLERS);
    const port = await freePort();
    const consoleProcess = spawnCli(['console', '--port', String(port)], { cwd: dir, env: { CHECKOUT_STORE: 'file:.checkout-kit', LOG_LEVEL: 'warn' } });
    children.push(consoleProcess);
    await waitForLine(consoleProcess, /checkout-kit console on/);
    const badJson = await fetch(`http://127.0.0.1:${port}/healthz`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' });
    expect(badJson.status).toBe(400);
    expect(await badJson.json()).toEqual(specError('invalid_request'));
    const badUrl = await fetch(`http://127.0.0.1:${port}/%zz`);
    expect(badUrl.status).toBe(400);
    expect(await badUrl.json()).toEqual(specError('invalid_request'));
    expect(await raw(port, 'GET /healthz HTTP/1.1\r\n\r\n')).toEqual({ status: 400, body: specError('invalid_request') });
    const postMetrics = await fetch(`http://127.0.0.1:${port}/metrics`, { method: 'POST' });
    expect([postMetrics.status, postMetrics.headers.get('allow'), await postMetrics.json()]).toEqual([405, 'GET, HEAD', specError('method_not_allowed')]);
    // Inside the console's pages too: fastify's own 4xx keep their status and get their code.
    const xml = await fetch(`http://127.0.0.1:${port}/checkout-kit/actions/retry`, {
      method: 'POST',
      headers: { 'content-type': 'text/xml' },
      body: '<retry/>',
    });
    expect(xml.status).toBe(415);
    expect(await xml.json()).toEqual({ error: { code: 'unsupported_media_type', message: expect.stringMatching(/\.$/) } });
  });

  it('sandbox: a URL that does not decode, bytes that are not HTTP, no Host', async () => {
    const { dir } = await openShop('ck-sandbox-errors-', HANDLERS);
    const sandbox = spawnCli(['sandbox', '--port', '0', '--data', dir], { cwd: dir });
    children.push(sandbox);
    const [, url] = await waitForLine(sandbox, /sandbox listening on (http:\/\/127\.0\.0\.1:\d+)/);
    const badUrl = await fetch(`${url}/v1/invoices/%zz`);
    expect(badUrl.status).toBe(400);
    expect(await badUrl.json()).toEqual(specError('invalid_request'));
    expect(await raw(Number(new URL(url!).port), 'NOT HTTP AT ALL\r\n\r\n')).toEqual({ status: 400, body: specError('invalid_request') });
    expect(await raw(Number(new URL(url!).port), 'GET /v1/invoices HTTP/1.1\r\n\r\n')).toEqual({ status: 400, body: specError('invalid_request') });
  });
});

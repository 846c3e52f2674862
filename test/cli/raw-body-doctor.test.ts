import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { signWebhook } from '../../src/webhooks/index.js';
import { runCli, spawnCli, stopProcess, waitForLine } from '../support/cli.js';
import { freePort } from '../support/ports.js';
import { removeTempDirs, tempDir } from '../support/temp-dirs.js';
import { paymentEvent, SECRET } from '../webhooks/helpers.js';

const running: Array<{ stop(): Promise<unknown> }> = [];
afterEach(async () => {
  for (const item of running.splice(0).reverse()) await item.stop();
  await removeTempDirs();
});

/** A proxy that parses JSON bodies and writes them out again, indented (as some gateways do). */
async function reformattingProxy(upstream: string): Promise<string> {
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', async () => {
      const body = JSON.stringify(JSON.parse(Buffer.concat(chunks).toString('utf8')), null, 2);
      const headers: Record<string, string> = { via: '1.1 reformatting-proxy', 'x-forwarded-for': '127.0.0.1' };
      for (const [name, value] of Object.entries(request.headers))
        if (typeof value === 'string' && name !== 'content-length' && name !== 'host') headers[name] = value;
      const answer = await fetch(upstream, { method: 'POST', headers, body });
      response.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
      response.end(await answer.text());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  running.push({ stop: () => new Promise((resolve) => server.close(resolve)) });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/checkout`;
}

describe('raw-body doctor through a real `checkout-kit serve`', () => {
  it('a delivery re-serialised by a proxy: 401 with the diagnosis (test keys: development mode), in the log and in `events dead-letters`', async () => {
    const dir = await tempDir('ck-doctor-serve-');
    await writeFile(join(dir, 'fulfillment.mjs'), 'export default {};\n');
    const port = await freePort();
    const env = {
      CHECKOUT_WEBHOOK_SECRET: SECRET,
      CHECKOUT_STORE: `file:${join(dir, 'store')}`,
      // A test-mode key: the receiver is for test deliveries, so the 401 carries the diagnosis.
      CHECKOUT_BASE_URL: 'http://127.0.0.1:9',
      CHECKOUT_INVOICE_KEY: 'test_doctor0000000000000000',
      LOG_LEVEL: 'info',
    };
    const serve = spawnCli(['serve', '--port', String(port)], { cwd: dir, env });
    running.push({ stop: () => stopProcess(serve) });
    let log = '';
    serve.stderr?.on('data', (chunk: Buffer) => (log += chunk.toString()));
    await waitForLine(serve, /listening on/);
    const direct = `http://127.0.0.1:${port}/webhooks/checkout`;

    const send = async (url: string, event = paymentEvent()) => {
      const body = JSON.stringify(event);
      const headers = { 'content-type': 'application/json', ...signWebhook({ id: event.id, body, secret: SECRET }) };
      const response = await fetch(url, { method: 'POST', headers, body });
      return { status: response.status, body: (await response.json()) as { error?: { code: string; message: string } } };
    };

    // The same kind of delivery straight to serve verifies: the proxy is what breaks it.
    expect((await send(direct)).status).toBe(200);

    const proxied = await send(await reformattingProxy(direct));
    expect(proxied.status).toBe(401);
    expect(proxied.body.error?.code).toBe('invalid_signature');
    expect(proxied.body.error?.message).toContain('Likely cause: The body was re-serialised from parsed JSON (changed: whitespace)');
    expect(proxied.body.error?.message).toContain('a proxy in front of this app');

    await expect.poll(() => log).toMatch(/"cause":"reserialised-json"/);
    expect(log).toContain('"framework":"proxy"');
    expect(log).not.toContain(SECRET);

    const letters = await runCli(['events', 'dead-letters'], { cwd: dir, env });
    expect(letters.code).toBe(0);
    expect(letters.stdout).toMatch(/invalid_signature \(body re-serialised from parsed JSON\)/);
    expect(letters.stdout).toMatch(/^ {2}Likely cause: The body was re-serialised from parsed JSON \(changed: whitespace\)/m);
    expect(letters.stdout).toMatch(/^ {2}Fix: Verify the bytes as received, before any JSON parsing: a proxy in front of this app/m);
    const json = await runCli(['events', 'dead-letters', '--json'], { cwd: dir, env });
    const [letter] = JSON.parse(json.stdout) as Array<{ reason: string; headers: Record<string, string>; body: string }>;
    expect(letter?.headers.via).toBe('1.1 reformatting-proxy');
    expect(letter?.body.startsWith('{\n  "id"')).toBe(true);
  });
});

import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runKeys } from '../../src/runs/index.js';
import { newWebhookSecret, signWebhook } from '../../src/webhooks/index.js';
import { execCli, spawnCli, stopProcess, waitForLine } from '../support/cli.js';
import { TEST_KEYS } from '../support/fixtures.js';
import { eventually, freePort } from '../support/ports.js';
import { removeTempDirs, tempDir } from '../support/temp-dirs.js';
import { readCalls, RECORDING_HANDLERS } from './support/hostile-serve.js';
import { reportFigures } from './support/report.js';
import { payment, serveEnvFor, startStandIn, type StandIn } from './support/service-standin.js';

// Mutations checked: without the dispatcher throwing past the runner when its handlers fail
// while stopping, the run is failed with an error (and backoff); without the lease given back, the
// restart waits out the 30 s lease. Before the signal reached the confirm read, serve was still
// running 60 s after SIGTERM and was SIGKILLed.
//
// A real `checkout-kit serve` stopped (SIGTERM, as `docker stop` and Kubernetes do) while its
// confirm reads wait out a long `Retry-After`: it must exit at once, not when the service lets it
// read again (past any orchestrator's grace period, which ends in SIGKILL), and the next start
// must fulfil the payment exactly once without waiting for the abandoned lease to run out.

/** Far longer than any grace period: a serve that waits for it cannot pass. */
const RETRY_AFTER_SECONDS = 300;

/** A request written whole on a connection of its own: `sent` once it is in the kernel, `answer` once serve answered and closed. */
async function rawRequest(port: number, bytes: string): Promise<{ sent: Promise<void>; answer: Promise<{ status: number; head: string; body: string }> }> {
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  let received = '';
  socket.on('data', (chunk: Buffer) => void (received += chunk.toString('utf8')));
  const answer = once(socket, 'close').then(() => {
    const [head = '', body = ''] = received.split('\r\n\r\n');
    return { status: Number(head.split(' ')[1]), head, body };
  });
  const sent = new Promise<void>((resolve, reject) => socket.write(bytes, (error) => (error ? reject(error) : resolve())));
  return { sent, answer };
}

/**
 * A request to serve and its answer: whatever was written to serve before is in its hands once
 * this answers (its event loop takes bytes in the order they arrived, and parses a request's head
 * as soon as it reads it). The status, or `closed` when it no longer takes connections.
 */
async function roundTrip(port: number): Promise<number | 'closed'> {
  try {
    const response = await fetch(`http://127.0.0.1:${port}/healthz`);
    await response.arrayBuffer();
    return response.status;
  } catch {
    return 'closed';
  }
}

/** Once serve has begun to close: new requests get 503 (fastify while closing), or no connection. */
const closing = (port: number) => eventually(async () => ((await roundTrip(port)) === 200 ? undefined : true), 60_000, 20);

/** The count of `checkout_kit_service_requests_total` for an operation and status in serve's /metrics. */
async function serviceRequests(port: number, operation: string, status: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const line = text
    .split('\n')
    .find((row) => row.startsWith('checkout_kit_service_requests_total{') && row.includes(`operation="${operation}"`) && row.includes(`status="${status}"`));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

const children: ChildProcess[] = [];
const standIns: StandIn[] = [];
afterEach(async () => {
  await Promise.all(children.splice(0).map((child) => stopProcess(child, 5_000)));
  await Promise.all(standIns.splice(0).map((standIn) => standIn.close()));
  await removeTempDirs();
});

describe('serve stopped while its reads wait for the service', () => {
  it('exits at once on SIGTERM, and the next start fulfils the payment exactly once, without waiting out the lease', async () => {
    const dir = await tempDir('ck-shutdown-');
    const secret = newWebhookSecret();
    const calls = join(dir, 'calls.jsonl');
    await writeFile(join(dir, 'fulfillment.mjs'), RECORDING_HANDLERS);
    const standIn = await startStandIn({ apiKey: TEST_KEYS.apiKey, otherPayment: payment(randomUUID(), '1.00', '0'), retryAfterSeconds: RETRY_AFTER_SECONDS });
    standIns.push(standIn);
    const paymentId = randomUUID();
    standIn.add('rate429', payment(paymentId, '10.00', '10.00'));

    const port = await freePort();
    const env = { ...serveEnvFor(standIn, { dir, secret, calls }), LOG_LEVEL: 'info' };
    const start = async () => {
      const serve = spawnCli(['serve', '--port', String(port)], { cwd: dir, env });
      children.push(serve);
      await waitForLine(serve, /checkout-kit serve listening on/);
      return serve;
    };

    const serve = await start();
    let log = '';
    serve.stderr!.on('data', (chunk: Buffer) => void (log += chunk.toString('utf8')));
    serve.stdout!.on('data', (chunk: Buffer) => void (log += chunk.toString('utf8')));
    const eventId = `evt_${randomUUID()}`;
    const body = JSON.stringify({
      id: eventId,
      type: 'payment.paid',
      createdAt: new Date().toISOString(),
      environment: 'test',
      data: payment(paymentId, '10.00', '10.00'),
    });
    const response = await fetch(`http://127.0.0.1:${port}/webhooks/checkout`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...signWebhook({ id: eventId, body, secret }) },
      body,
    });
    expect(response.status).toBe(200);
    // The service said 429 with Retry-After, and serve took it in: every read of this serve now waits 300 s.
    await eventually(async () => ((await serviceRequests(port, 'payments.get', '429')) >= 1 ? true : undefined), 60_000, 50);
    // A buyer's checkout arrives meanwhile, in serve's hands before the stop: its create call waits in the same limiter.
    const checkout = JSON.stringify({ orderId: `order-${randomUUID()}`, amount: '10.00' });
    const buyer = await rawRequest(
      port,
      `POST /checkout HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\ncontent-type: application/json\r\naccept: application/json\r\nconnection: close\r\ncontent-length: ${Buffer.byteLength(checkout)}\r\n\r\n${checkout}`,
    );
    await buyer.sent;
    expect(await roundTrip(port)).toBe(200);

    const stopping = performance.now();
    const code = await stopProcess(serve, 60_000);
    const stopSeconds = (performance.now() - stopping) / 1000;
    // Exited by itself (0), long before the Retry-After, let alone the 60 s before SIGKILL here.
    expect(code).toBe(0);
    expect(stopSeconds).toBeLessThan(30);
    // The buyer is told to try again (the attempt stays recorded: the retry gets the same payment).
    const answered = await buyer.answer;
    expect(answered.status).toBe(503);
    expect(JSON.parse(answered.body)).toMatchObject({ error: { code: 'service_unreachable' } });
    expect(readCalls(calls)).toEqual([]);
    expect(log).not.toMatch(/"level":(50|60)/);
    expect(log).toContain(`Stopped while running ${runKeys.event(eventId)}: it runs again at the next start.`);

    // What the store holds after the stop, read by another process: the event's run is still to
    // do (not failed, no error recorded), and claimable now (its lease given back).
    const runs = await execCli(['runs', '--json'], { cwd: dir, env });
    expect(runs.code).toBe(0);
    const run = (JSON.parse(runs.stdout) as Array<{ key: string; status: string; attempts: number; lastError?: string; leaseUntil?: string }>).find(
      (r) => r.key === runKeys.event(eventId),
    );
    expect(run).toMatchObject({ status: 'running', attempts: 1 });
    expect(run?.lastError).toBeUndefined();
    expect(Date.parse(run!.leaseUntil!)).toBeLessThanOrEqual(Date.now());

    // The service recovers; the next start fulfils the payment once, well before the abandoned
    // 30 s lease would have let it.
    standIn.recover();
    const again = await start();
    const restarted = performance.now();
    await eventually(() => (readCalls(calls).length >= 1 ? true : undefined), 60_000, 100);
    const fulfilledSeconds = (performance.now() - restarted) / 1000;
    expect(fulfilledSeconds).toBeLessThan(25);
    // Once it has exited, every call it made is in the file: exactly one.
    expect(await stopProcess(again, 30_000)).toBe(0);
    expect(readCalls(calls).map((call) => [call.id, call.outcome])).toEqual([[paymentId, 'paid']]);
    reportFigures('shutdown', {
      retryAfterSeconds: RETRY_AFTER_SECONDS,
      stopSeconds: stopSeconds.toFixed(2),
      exitCode: String(code),
      fulfilledAfterRestartSeconds: fulfilledSeconds.toFixed(2),
      handlerCalls: readCalls(calls).length,
    });
  }, 120_000);

  it("a sender's keep-alive connection with a delivery in flight at SIGTERM: the delivery is answered (and the connection closed), and serve exits at once, not after the 72 s keep-alive", async () => {
    const dir = await tempDir('ck-shutdown-keepalive-');
    const secret = newWebhookSecret();
    const calls = join(dir, 'calls.jsonl');
    await writeFile(join(dir, 'fulfillment.mjs'), RECORDING_HANDLERS);
    const standIn = await startStandIn({ apiKey: TEST_KEYS.apiKey, otherPayment: payment(randomUUID(), '1.00', '0') });
    standIns.push(standIn);
    const paymentId = randomUUID();
    standIn.add('ok', payment(paymentId, '10.00', '10.00'));
    const port = await freePort();
    const serve = spawnCli(['serve', '--port', String(port)], { cwd: dir, env: { ...serveEnvFor(standIn, { dir, secret, calls }), LOG_LEVEL: 'warn' } });
    children.push(serve);
    await waitForLine(serve, /checkout-kit serve listening on/);

    const eventId = `evt_${randomUUID()}`;
    const body = JSON.stringify({
      id: eventId,
      type: 'payment.paid',
      createdAt: new Date().toISOString(),
      environment: 'test',
      data: payment(paymentId, '10.00', '10.00'),
    });
    const headers = { 'content-type': 'application/json', ...signWebhook({ id: eventId, body, secret }) };
    const socket = connect(port, '127.0.0.1');
    await once(socket, 'connect');
    let answer = '';
    socket.on('data', (chunk: Buffer) => void (answer += chunk.toString('utf8')));
    const closed = once(socket, 'close');
    // A keep-alive delivery, half its body sent when serve is told to stop.
    const head = `POST /webhooks/checkout HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\nconnection: keep-alive\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${Object.entries(
      headers,
    )
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('')}\r\n`;
    await new Promise<void>((resolve, reject) => socket.write(head + body.slice(0, 100), (error) => (error ? reject(error) : resolve())));
    // serve has the request's head (a delivery in flight) once a later request is answered.
    expect(await roundTrip(port)).toBe(200);
    const stopping = performance.now();
    const exited = stopProcess(serve, 60_000);
    // The rest of the body only once serve is closing.
    await closing(port);
    socket.write(body.slice(100));
    await closed;
    const code = await exited;
    const stopSeconds = (performance.now() - stopping) / 1000;
    expect(answer).toMatch(/^HTTP\/1\.1 200/);
    expect(answer.toLowerCase()).toContain('connection: close');
    expect(code).toBe(0);
    expect(stopSeconds).toBeLessThan(30);
    // Acknowledged, so stored: the next start dispatches it (confirmed, fulfilled once).
    const again = spawnCli(['serve', '--port', String(port)], { cwd: dir, env: { ...serveEnvFor(standIn, { dir, secret, calls }), LOG_LEVEL: 'warn' } });
    children.push(again);
    await waitForLine(again, /checkout-kit serve listening on/);
    await eventually(() => (readCalls(calls).length >= 1 ? true : undefined), 60_000, 100);
    expect(readCalls(calls).map((call) => [call.id, call.outcome])).toEqual([[paymentId, 'paid']]);
    reportFigures('shutdown-keepalive', { stopSeconds: stopSeconds.toFixed(2), exitCode: String(code) });
  }, 120_000);
});

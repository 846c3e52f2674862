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
    const body = JSON.stringify({ id: eventId, type: 'payment.paid', createdAt: new Date().toISOString(), environment: 'test', data: payment(paymentId, '10.00', '10.00') });
    const response = await fetch(`http://127.0.0.1:${port}/webhooks/checkout`, { method: 'POST', headers: { 'content-type': 'application/json', ...signWebhook({ id: eventId, body, secret }) }, body });
    expect(response.status).toBe(200);
    // The service said 429 with Retry-After: every read of this serve now waits 300 s.
    await eventually(() => (standIn.reads(paymentId) >= 1 ? true : undefined), 20_000, 50);
    // A buyer's checkout arrives meanwhile: its create call waits in the same limiter.
    const buyer = fetch(`http://127.0.0.1:${port}/checkout`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ orderId: `order-${randomUUID()}`, amount: '10.00' }),
    }).then(async (answer) => ({ status: answer.status, body: (await answer.json()) as { error?: { code?: string } } }));
    await new Promise((resolve) => setTimeout(resolve, 300));

    const stopping = performance.now();
    const code = await stopProcess(serve, 60_000);
    const stopSeconds = (performance.now() - stopping) / 1000;
    // Exited by itself (0), long before the Retry-After, let alone the 60 s before SIGKILL here.
    expect(code).toBe(0);
    expect(stopSeconds).toBeLessThan(30);
    // The buyer is told to try again (the attempt stays recorded: the retry gets the same payment).
    expect(await buyer).toMatchObject({ status: 503, body: { error: { code: 'service_unreachable' } } });
    expect(readCalls(calls)).toEqual([]);
    expect(log).not.toMatch(/"level":(50|60)/);
    expect(log).toContain(`Stopped while dispatching event ${eventId}: it is dispatched again at the next start.`);

    // What the store holds after the stop, read by another process: the event's run is still to
    // do (not failed, no error recorded), and claimable now (its lease given back).
    const runs = await execCli(['runs', '--json'], { cwd: dir, env });
    expect(runs.code).toBe(0);
    const run = (JSON.parse(runs.stdout) as Array<{ key: string; status: string; attempts: number; lastError?: string; leaseUntil?: string }>).find((r) => r.key === runKeys.event(eventId));
    expect(run).toMatchObject({ status: 'running', attempts: 1 });
    expect(run?.lastError).toBeUndefined();
    expect(Date.parse(run!.leaseUntil!)).toBeLessThanOrEqual(Date.now());

    // The service recovers; the next start fulfils the payment once, well before the abandoned
    // 30 s lease would have let it.
    standIn.recover();
    const restarted = performance.now();
    const again = await start();
    await eventually(() => (readCalls(calls).length >= 1 ? true : undefined), 25_000, 100);
    const fulfilledSeconds = (performance.now() - restarted) / 1000;
    expect(fulfilledSeconds).toBeLessThan(25);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(readCalls(calls).map((call) => [call.id, call.outcome])).toEqual([[paymentId, 'paid']]);
    expect(await stopProcess(again, 30_000)).toBe(0);
    reportFigures('shutdown', { retryAfterSeconds: RETRY_AFTER_SECONDS, stopSeconds: stopSeconds.toFixed(2), exitCode: String(code), fulfilledAfterRestartSeconds: fulfilledSeconds.toFixed(2), handlerCalls: readCalls(calls).length });
  }, 120_000);

  it('a sender\'s keep-alive connection with a delivery in flight at SIGTERM: the delivery is answered (and the connection closed), and serve exits at once, not after the 72 s keep-alive', async () => {
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
    const body = JSON.stringify({ id: eventId, type: 'payment.paid', createdAt: new Date().toISOString(), environment: 'test', data: payment(paymentId, '10.00', '10.00') });
    const headers = { 'content-type': 'application/json', ...signWebhook({ id: eventId, body, secret }) };
    const socket = connect(port, '127.0.0.1');
    await once(socket, 'connect');
    let answer = '';
    socket.on('data', (chunk: Buffer) => void (answer += chunk.toString('utf8')));
    const closed = once(socket, 'close');
    // A keep-alive delivery, half its body sent when serve is told to stop.
    const head = `POST /webhooks/checkout HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\nconnection: keep-alive\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('')}\r\n`;
    socket.write(head + body.slice(0, 100));
    await new Promise((resolve) => setTimeout(resolve, 200));
    const stopping = performance.now();
    const exited = stopProcess(serve, 60_000);
    await new Promise((resolve) => setTimeout(resolve, 300));
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
    await eventually(() => (readCalls(calls).length >= 1 ? true : undefined), 25_000, 100);
    expect(readCalls(calls).map((call) => [call.id, call.outcome])).toEqual([[paymentId, 'paid']]);
    reportFigures('shutdown-keepalive', { stopSeconds: stopSeconds.toFixed(2), exitCode: String(code) });
  }, 120_000);
});

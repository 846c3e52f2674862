import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import type { SandboxHandle, SandboxOptions } from '../../src/sandbox/index.js';
import { api, cleanup, openSandbox, readCredentials, simulate, startReceiver, waitUntil, type Receiver } from './helpers.js';

const receivers: Receiver[] = [];
afterEach(async () => {
  await cleanup();
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});

async function setup(options: SandboxOptions = {}, respond?: (n: number) => number | Promise<number>) {
  const receiver = await startReceiver(respond);
  receivers.push(receiver);
  const sandbox = await openSandbox({
    webhookUrls: [receiver.url],
    retry: { baseDelayMs: 50, timeoutMs: 1000 },
    faults: { seed: 7, ...options.faults },
    ...options,
  });
  const creds = await readCredentials(sandbox);
  const createPayment = (body: Record<string, unknown> = { amount: '10.00' }) =>
    api(sandbox, 'POST', '/v1/payments', { key: creds.test.merchant.apiKey, secret: creds.test.merchant.signingSecret, body });
  return { receiver, sandbox, creds, createPayment };
}

/** Verify with the independent `standardwebhooks` package; returns the parsed envelope. */
function verified(secret: string, delivery: { headers: Record<string, string>; body: string }): Record<string, any> {
  return new Webhook(secret).verify(delivery.body, delivery.headers) as Record<string, any>;
}

const deliveriesOver = async (sandbox: SandboxHandle) => (await api(sandbox, 'GET', '/sandbox/deliveries')).body as Array<Record<string, any>>;

describe('webhook sender', () => {
  it('signs every event with Standard Webhooks; envelopes carry the resource as Get returns it', async () => {
    const { receiver, sandbox, creds, createPayment } = await setup();
    const payment = (await createPayment({ amount: '10.00' })).body;
    await simulate(sandbox, `/sandbox/payments/${payment.id}/deposit`, { amount: '4' });
    await simulate(sandbox, `/sandbox/payments/${payment.id}/deposit`, { amount: '6' });
    await simulate(sandbox, `/sandbox/payments/${payment.id}/deposit`, { amount: '1' });
    await waitUntil(() => receiver.received.length === 4, undefined, 'four deliveries');

    const events = receiver.received.map((d) => verified(creds.webhookSecret, d));
    expect(events.map((e) => e.type)).toEqual(['payment.created', 'payment.partially_paid', 'payment.paid', 'payment.overpaid']);
    for (const [i, event] of events.entries()) {
      expect(Object.keys(event).sort()).toEqual(['createdAt', 'data', 'environment', 'id', 'type']);
      expect(event.environment).toBe('test');
      expect(receiver.received[i]!.headers['webhook-id']).toBe(event.id);
    }
    expect(events.map((e) => e.data.amountReceived)).toEqual(['0', '4.00', '10.00', '11.00']);
    const current = await api(sandbox, 'GET', `/v1/payments/${payment.id}`, { key: creds.test.merchant.apiKey, secret: creds.test.merchant.signingSecret });
    expect(events[3]!.data).toEqual(current.body);
    expect((await api(sandbox, 'GET', '/sandbox/events')).body.map((e: { id: string }) => e.id)).toEqual(events.map((e) => e.id));
  });

  it('retries a 500 with backoff until a 2xx and logs every attempt', async () => {
    const { receiver, sandbox, creds, createPayment } = await setup({}, (n) => (n <= 2 ? 500 : 204));
    await createPayment();
    await sandbox.webhooksIdle();
    expect(receiver.received).toHaveLength(3);
    // The same event, byte for byte, on every attempt; each attempt verifies.
    expect(new Set(receiver.received.map((d) => d.body)).size).toBe(1);
    for (const d of receiver.received) expect(verified(creds.webhookSecret, d).type).toBe('payment.created');

    const log = await deliveriesOver(sandbox);
    expect(log.map((d) => [d.attempt, d.statusCode, d.delivered])).toEqual([
      [1, 500, false],
      [2, 500, false],
      [3, 204, true],
    ]);
    expect(log[0]!.nextAttemptAt).not.toBeNull();
    expect(log[2]!.nextAttemptAt).toBeNull();
    for (const d of log) expect(d).toMatchObject({ eventId: log[0]!.eventId, type: 'payment.created', url: receiver.url, dropped: false, duplicated: false });
    // Exponential backoff: the second gap (100 ms) is at least the base delay doubled.
    const gaps = [receiver.received[1]!.at - receiver.received[0]!.at, receiver.received[2]!.at - receiver.received[1]!.at];
    expect(gaps[0]).toBeGreaterThanOrEqual(45);
    expect(gaps[1]).toBeGreaterThanOrEqual(95);
  });

  it('gives up after maxAttempts; a timeout counts as a failure', async () => {
    // Room for a busy machine: the answers that must arrive get a second, the one that must not comes after 2.5 s.
    const { receiver, sandbox, createPayment } = await setup({ retry: { baseDelayMs: 10, maxAttempts: 3, timeoutMs: 1000 } }, async (n) => {
      if (n === 1) await new Promise((resolve) => setTimeout(resolve, 2500));
      return 503;
    });
    await createPayment();
    await sandbox.webhooksIdle();
    const log = await deliveriesOver(sandbox);
    expect(log.map((d) => d.attempt)).toEqual([1, 2, 3]);
    expect(log[0]!.statusCode).toBeNull();
    expect(log[0]!.error).toMatch(/no answer within 1000 ms/);
    expect(log.slice(1).map((d) => d.statusCode)).toEqual([503, 503]);
    expect(log.every((d) => !d.delivered)).toBe(true);
    expect(receiver.received.length).toBe(3);
  });

  it('logs a webhook URL on a port fetch refuses as such, with what to do', async () => {
    const { sandbox, createPayment } = await setup({
      webhookUrls: ['http://127.0.0.1:6000/hook'],
      retry: { baseDelayMs: 10, maxAttempts: 1, timeoutMs: 1000 },
    });
    await createPayment();
    await sandbox.webhooksIdle();
    const log = await deliveriesOver(sandbox);
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({ statusCode: null, delivered: false });
    expect(log[0]!.error).toMatch(
      /^fetch failed: fetch refuses to connect to http:\/\/127\.0\.0\.1:6000\/hook .*bad ports.*let the server listen on another port$/,
    );
  });

  it('--drop 1 delivers nothing but still stores the events', async () => {
    const { receiver, sandbox, createPayment } = await setup({ faults: { drop: 1 } });
    await createPayment();
    await createPayment();
    await sandbox.webhooksIdle();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(receiver.received).toHaveLength(0);
    const log = await deliveriesOver(sandbox);
    expect(log).toHaveLength(2);
    expect(log.every((d) => d.dropped && d.attempt === 0 && d.statusCode === null)).toBe(true);
    expect(sandbox.events()).toHaveLength(2);
  });

  it('--duplicate 1 delivers each event twice with the same webhook-id', async () => {
    const { receiver, sandbox, creds, createPayment } = await setup({ faults: { duplicate: 1 } });
    await createPayment();
    await sandbox.webhooksIdle();
    expect(receiver.received).toHaveLength(2);
    const [a, b] = receiver.received.map((d) => verified(creds.webhookSecret, d));
    expect(a!.id).toBe(b!.id);
    expect(receiver.received[0]!.body).toBe(receiver.received[1]!.body);
    expect((await deliveriesOver(sandbox)).map((d) => d.duplicated).sort()).toEqual([false, true]);
  });

  it('--stale-timestamp 1 signs an hour in the past, which a verifier rejects', async () => {
    const { receiver, sandbox, creds, createPayment } = await setup({ faults: { staleTimestamp: 1 } });
    await createPayment();
    await sandbox.webhooksIdle();
    const delivery = receiver.received[0]!;
    expect(Math.floor(Date.now() / 1000) - Number(delivery.headers['webhook-timestamp'])).toBeGreaterThanOrEqual(3599);
    expect(() => verified(creds.webhookSecret, delivery)).toThrow(/too old/i);
    // Only the timestamp is stale: the signature over it is otherwise correct.
    const key = Buffer.from(creds.webhookSecret.slice('whsec_'.length), 'base64');
    const mac = createHmac('sha256', key)
      .update(`${delivery.headers['webhook-id']}.${delivery.headers['webhook-timestamp']}.${delivery.body}`)
      .digest('base64');
    expect(delivery.headers['webhook-signature']!.split(' ')).toContain(`v1,${mac}`);
    expect((await deliveriesOver(sandbox))[0]!.staleTimestamp).toBe(true);
  });

  it('--delay holds each delivery back', async () => {
    const { receiver, sandbox, createPayment } = await setup({ faults: { delayMs: 300 } });
    const created = Date.now();
    await createPayment();
    await sandbox.webhooksIdle();
    expect(receiver.received[0]!.at - created).toBeGreaterThanOrEqual(290);
  });

  it('--reorder shuffles a batch, identically for one seed', async () => {
    async function arrivalOrder(): Promise<string[]> {
      const { receiver, sandbox, createPayment } = await setup({ faults: { reorder: true, reorderWindowMs: 1500, seed: 42 } });
      for (let i = 0; i < 6; i++) await createPayment({ amount: '1', referenceId: `r${i}` });
      await sandbox.webhooksIdle();
      return receiver.received.map((d) => (JSON.parse(d.body) as { data: { referenceId: string } }).data.referenceId);
    }
    const first = await arrivalOrder();
    const second = await arrivalOrder();
    expect([...first].sort()).toEqual(['r0', 'r1', 'r2', 'r3', 'r4', 'r5']);
    expect(first).not.toEqual(['r0', 'r1', 'r2', 'r3', 'r4', 'r5']);
    expect(second).toEqual(first);
  });

  it('drop decisions are reproducible from the seed', async () => {
    async function droppedPattern(seed: number): Promise<boolean[]> {
      const { sandbox, createPayment } = await setup({ faults: { drop: 0.5, seed } });
      for (let i = 0; i < 12; i++) await createPayment({ amount: '1', referenceId: `r${i}` });
      await sandbox.webhooksIdle();
      const log = sandbox.deliveries();
      return sandbox.events().map((e) => log.some((d) => d.eventId === e.id && d.dropped));
    }
    const a = await droppedPattern(1234);
    expect(await droppedPattern(1234)).toEqual(a);
    expect(a.some(Boolean) && !a.every(Boolean)).toBe(true);
  });
});

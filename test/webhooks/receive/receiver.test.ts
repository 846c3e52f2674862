import { describe, expect, expectTypeOf, it } from 'vitest';
import type { Invoice, Payment } from '../../../src/schemas/index.js';
import { ConfigError, StoreError } from '../../../src/errors/index.js';
import { MemoryStore } from '../../../src/store/memory-store.js';
import { createReceiver, WebhookHandlerError, type ReceiverOptions, type WebhookReceiver } from '../../../src/webhooks/index.js';
import { captureLogger, paymentEvent, SECRET, signed, signedEvent, waitFor } from '../helpers.js';

function setup(options: Partial<ReceiverOptions> = {}) {
  const store = new MemoryStore();
  const logger = captureLogger();
  const receiver = createReceiver({ store, secrets: [SECRET], logger, ...options });
  return { store, logger, receiver };
}

const errorCode = (result: { body: unknown }) => (result.body as { error: { code: string } }).error.code;

describe('receiving', () => {
  it('stores a verified event byte-exact, acknowledges it, then dispatches it once', async () => {
    const { store, receiver } = setup();
    const event = paymentEvent();
    // Odd spacing and non-ASCII: the stored body must be the bytes received, not re-serialised JSON.
    const body = JSON.stringify(event, null, 3).replace('"PAID"', '"PAID" ').replace('order-1', 'ordér-1 ✓');
    const seen: string[] = [];
    receiver.on('payment.paid', (e) => void seen.push(e.id));

    const result = await receiver.handle({ headers: signed(body).headers, body: Buffer.from(body) });

    expect(result).toEqual({ status: 200, body: { received: true, id: event.id, duplicate: false } });
    const stored = await store.getEvent(event.id);
    expect(stored).toMatchObject({
      id: event.id,
      type: 'payment.paid',
      environment: 'test',
      createdAt: event.createdAt,
      resourceKind: 'payment',
      resourceId: event.data.id,
    });
    expect(Buffer.from(stored!.body!, 'utf8').equals(Buffer.from(body))).toBe(true);
    expect(Date.parse(stored!.receivedAt)).toBeGreaterThan(Date.now() - 5000);
    await receiver.idle();
    expect(seen).toEqual([event.id]);
    expect((await store.getRun(`event:${event.id}`))?.status).toBe('done');
  });

  it('is durable before the 2xx: the run is queued when handle resolves, handlers not yet called', async () => {
    const { store, receiver } = setup();
    let called = 0;
    receiver.onAny(() => void (called += 1));
    const delivery = signedEvent();
    const result = await receiver.handle(delivery);
    expect(result.status).toBe(200);
    const id = (result.body as { id: string }).id;
    expect(await store.getEvent(id)).toBeDefined();
    expect(called).toBe(0);
    await receiver.idle();
    expect(called).toBe(1);
  });

  it('acknowledges a duplicate with 2xx and does not dispatch it again', async () => {
    const { store, receiver } = setup();
    let calls = 0;
    receiver.on('payment.paid', () => void (calls += 1));
    const event = paymentEvent();
    const first = await receiver.handle(signedEvent(event));
    await receiver.idle();
    // A redelivery is signed afresh (new webhook-id/timestamp) but carries the same event id.
    const second = await receiver.handle(signedEvent(event));
    await receiver.idle();
    expect(first.body).toMatchObject({ duplicate: false });
    expect(second).toEqual({ status: 200, body: { received: true, id: event.id, duplicate: true } });
    expect(calls).toBe(1);
    expect(await store.listEvents()).toHaveLength(1);
  });

  it('dispatches 20 concurrent duplicates once', async () => {
    const { receiver } = setup();
    let calls = 0;
    receiver.on('payment.paid', async () => {
      calls += 1;
      await new Promise((resolve) => setTimeout(resolve, 10));
    });
    const delivery = signedEvent();
    const results = await Promise.all(Array.from({ length: 20 }, () => receiver.handle(delivery)));
    await receiver.idle();
    expect(results.every((result) => result.status === 200)).toBe(true);
    expect(results.filter((result) => (result.body as { duplicate: boolean }).duplicate === false)).toHaveLength(1);
    expect(calls).toBe(1);
  });

  it('stores, acknowledges and shows an unknown event type, and dispatches it to onAny and its own handler', async () => {
    const { store, receiver } = setup();
    const any: string[] = [];
    const own: string[] = [];
    receiver.onAny((e) => void any.push(e.type));
    receiver.on('refund.created', (e) => void own.push(e.id));
    const event = { id: 'evt_unknown_1', type: 'refund.created', createdAt: '2025-01-01T00:00:00Z', data: { anything: [1, 2, 3] }, extra: true };
    const result = await receiver.handle(signedEvent(event));
    await receiver.idle();
    expect(result.status).toBe(200);
    const listed = await store.listEvents({ type: 'refund.created' });
    expect(listed.map((e) => [e.id, e.resourceKind, e.run?.status])).toEqual([['evt_unknown_1', undefined, 'done']]);
    expect(JSON.parse(listed[0]!.body!)).toEqual(event);
    expect(any).toEqual(['refund.created']);
    expect(own).toEqual(['evt_unknown_1']);
  });

  it('maps another envelope with mapEnvelope', async () => {
    const { store, receiver } = setup({
      mapEnvelope: (json) => {
        const other = json as { event_id: string; kind: string; at: string; object: unknown };
        return { id: other.event_id, type: other.kind, createdAt: other.at, data: other.object };
      },
    });
    const payment = paymentEvent().data;
    const result = await receiver.handle(signedEvent({ event_id: 'evt_mapped', kind: 'payment.paid', at: '2025-01-01T00:00:00Z', object: payment }));
    expect(result.status).toBe(200);
    expect(await store.getEvent('evt_mapped')).toMatchObject({ type: 'payment.paid', resourceId: payment.id, environment: 'test' });
  });

  it('store only with dispatch: false', async () => {
    const { store, receiver } = setup({ dispatch: false });
    let calls = 0;
    receiver.onAny(() => void (calls += 1));
    const result = await receiver.handle(signedEvent());
    await receiver.idle();
    expect(result.status).toBe(200);
    expect(calls).toBe(0);
    expect(await store.listRuns({ status: 'pending' })).toHaveLength(1);
  });
});

describe('a receiver built without what it needs', () => {
  it('a missing store, or one without insertEvent, is a ConfigError naming it, not a 503 on every delivery', () => {
    for (const store of [undefined, null, {}, { insertEvent: async () => ({ inserted: true }) }]) {
      expect(() => createReceiver({ store, secrets: SECRET } as never)).toThrow(ConfigError);
      expect(() => createReceiver({ store, secrets: SECRET } as never)).toThrow(
        /^createReceiver needs a store to keep each event in: pass \{ store: await openStore/,
      );
    }
  });
});

describe('bad input is answered with the error object, never a 500', () => {
  it('400 missing_signature_headers', async () => {
    const { store, receiver } = setup();
    const { body } = signedEvent();
    const result = await receiver.handle({ headers: { 'content-type': 'application/json' }, body });
    expect(result.status).toBe(400);
    expect(result.body).toEqual({ error: { code: 'missing_signature_headers', message: expect.stringContaining('webhook-id') } });
    expect(await store.listEvents()).toHaveLength(0);
  });

  it('401 invalid_signature for a bad signature, a stale and a future timestamp', async () => {
    // One fixed clock: against the wall clock, a second ticking between signing and verifying made
    // the +301 s case 300 s ahead, inside the tolerance.
    const now = 1_900_000_000;
    const { store, receiver } = setup({ clock: () => new Date(now * 1000) });
    const body = JSON.stringify(paymentEvent());
    const cases = [
      { ...signed(body, { timestamp: now }).headers, 'webhook-signature': 'v1,AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=' },
      signed(body, { timestamp: now - 301 }).headers,
      signed(body, { timestamp: now + 301 }).headers,
    ];
    const results = await Promise.all(cases.map((headers) => receiver.handle({ headers, body })));
    expect(results.map((r) => [r.status, errorCode(r)])).toEqual([
      [401, 'invalid_signature'],
      [401, 'invalid_signature'],
      [401, 'invalid_signature'],
    ]);
    expect((results[1]!.body as { error: { message: string } }).error.message).toMatch(/^Message timestamp too old/);
    expect((results[2]!.body as { error: { message: string } }).error.message).toMatch(/^Message timestamp too new/);
    expect(await store.listEvents()).toHaveLength(0);
  });

  it('401 for a re-indented body', async () => {
    const { receiver } = setup();
    const delivery = signedEvent();
    const result = await receiver.handle({ headers: delivery.headers, body: JSON.stringify(JSON.parse(delivery.body), null, 2) });
    expect([result.status, errorCode(result)]).toEqual([401, 'invalid_signature']);
  });

  it('400 invalid_timestamp for a malformed timestamp', async () => {
    const { receiver } = setup();
    const delivery = signedEvent();
    const result = await receiver.handle({ headers: { ...delivery.headers, 'webhook-timestamp': 'yesterday' }, body: delivery.body });
    expect([result.status, errorCode(result)]).toEqual([400, 'invalid_timestamp']);
  });

  it('413 for a body over the limit, and nothing stored', async () => {
    const { store, receiver } = setup({ maxBodyBytes: 1024 });
    const big = signedEvent({ ...paymentEvent(), padding: 'x'.repeat(2000) });
    const result = await receiver.handle(big);
    expect([result.status, errorCode(result)]).toEqual([413, 'payload_too_large']);
    expect(await store.listEvents()).toHaveLength(0);
    expect(await store.listDeadLetters()).toHaveLength(0);
  });

  it('the default limit is 64 KiB', async () => {
    const { receiver } = setup();
    const event = paymentEvent();
    const fits = JSON.stringify({ ...event, padding: '' });
    const exact = JSON.stringify({ ...event, padding: 'x'.repeat(65_536 - fits.length) });
    expect(Buffer.byteLength(exact)).toBe(65_536);
    expect((await receiver.handle(signed(exact))).status).toBe(200);
    const over = JSON.stringify({ ...paymentEvent(), padding: 'x'.repeat(65_537 - fits.length) });
    expect((await receiver.handle(signed(over))).status).toBe(413);
  });

  it('415 for a non-JSON content type', async () => {
    const { receiver } = setup();
    const delivery = signedEvent();
    const result = await receiver.handle({ headers: { ...delivery.headers, 'content-type': 'text/plain' }, body: delivery.body });
    expect([result.status, errorCode(result)]).toEqual([415, 'unsupported_media_type']);
    const charset = await receiver.handle({ headers: { ...delivery.headers, 'content-type': 'application/json; charset=utf-8' }, body: delivery.body });
    expect(charset.status).toBe(200);
  });

  it('400 invalid_json for verified non-JSON, kept as a dead letter', async () => {
    const { store, receiver } = setup();
    const delivery = signed('{"id": "evt_1", oops');
    const result = await receiver.handle(delivery);
    expect([result.status, errorCode(result)]).toEqual([400, 'invalid_json']);
    const [letter] = await store.listDeadLetters();
    expect(letter).toMatchObject({ body: '{"id": "evt_1", oops', reason: expect.stringMatching(/^invalid_json/) });
    expect(letter!.headers['webhook-id']).toBe(delivery.headers['webhook-id']);
    expect(await store.listEvents()).toHaveLength(0);
  });

  it('400 invalid_event for an envelope failing the schema, kept as a dead letter', async () => {
    const { store, receiver } = setup();
    const bad = { ...paymentEvent(), data: { id: 'pay_1', status: 'PAID', amount: 25 } };
    const result = await receiver.handle(signedEvent(bad));
    expect([result.status, errorCode(result)]).toEqual([400, 'invalid_event']);
    expect((result.body as { error: { message: string } }).error.message).toContain('data.amount');
    expect(await store.listDeadLetters()).toHaveLength(1);
    const noId = await receiver.handle(signedEvent({ type: 'payment.paid', createdAt: '2025-01-01T00:00:00Z', data: {} }));
    expect(errorCode(noId)).toBe('invalid_event');
    expect(await store.listDeadLetters()).toHaveLength(2);
    expect(await store.listEvents()).toHaveLength(0);
  });

  it('403 wrong_environment both ways, with a clear log line, nothing stored', async () => {
    for (const [receiverEnv, eventEnv] of [
      ['live', 'test'],
      ['test', 'live'],
    ] as const) {
      const { store, receiver, logger } = setup({ environment: receiverEnv });
      const event = paymentEvent({ environment: eventEnv });
      const result = await receiver.handle(signedEvent(event));
      expect([result.status, errorCode(result)]).toEqual([403, 'wrong_environment']);
      expect(await store.listEvents()).toHaveLength(0);
      expect(await store.listDeadLetters()).toHaveLength(0);
      const line = logger.lines.find((l) => l.msg?.includes(event.id));
      expect(line?.level).toBe('error');
      expect(line?.msg).toContain(`is a ${eventEnv} event but this receiver is configured for ${receiverEnv}`);
    }
    const { receiver } = setup({ environment: 'live' });
    expect((await receiver.handle(signedEvent(paymentEvent({ environment: 'live' })))).status).toBe(200);
  });

  it('500 raw_body_required when handed a parsed object, saying how to fix it', async () => {
    const { receiver } = setup();
    const delivery = signedEvent();
    const result = await receiver.handle({ headers: delivery.headers, body: JSON.parse(delivery.body) });
    expect([result.status, errorCode(result)]).toEqual([500, 'raw_body_required']);
    expect((result.body as { error: { message: string } }).error.message).toMatch(/express\.json\(\).*express\.raw/s);
  });

  it('503 store_unavailable when the store fails, so the sender retries', async () => {
    const { store, receiver } = setup();
    store.insertEvent = async () => {
      throw new Error('disk full');
    };
    const result = await receiver.handle(signedEvent());
    expect([result.status, errorCode(result), result.headers?.['retry-after']]).toEqual([503, 'store_unavailable', '5']);
  });
});

describe('dispatch, retries and recovery', () => {
  it('retries a throwing handler with backoff, then marks the run failed; errors reach onError as an AggregateError', async () => {
    const { store, receiver } = setup({ maxAttempts: 3, backoffMs: 5, pollIntervalMs: 5 });
    let attempts = 0;
    receiver.on('payment.paid', () => {
      attempts += 1;
      throw new Error(`boom ${attempts}`);
    });
    receiver.on('payment.paid', async () => {
      throw new Error('second handler');
    });
    let ok = 0;
    receiver.onAny(() => void (ok += 1));
    const errors: WebhookHandlerError[] = [];
    receiver.onError((error) => void errors.push(error));
    const event = paymentEvent();
    await receiver.start();
    await receiver.handle(signedEvent(event));
    await waitFor(async () => (await store.getRun(`event:${event.id}`))?.status === 'failed');
    await receiver.stop();

    expect(attempts).toBe(3);
    expect(ok).toBe(3);
    expect(errors.map((e) => [e.attempt, e.willRetry, e.errors.length])).toEqual([
      [1, true, 2],
      [2, true, 2],
      [3, false, 2],
    ]);
    expect(errors[0]).toBeInstanceOf(AggregateError);
    expect(errors[0]!.event.id).toBe(event.id);
    expect((errors[2]!.errors as Error[]).map((e) => e.message)).toEqual(['boom 3', 'second handler']);
    const run = await store.getRun(`event:${event.id}`);
    expect(run).toMatchObject({ status: 'failed', attempts: 3, lastError: expect.stringContaining('boom 3') });
  });

  it('retryFailed puts a failed event back and dispatches it', async () => {
    const { store, receiver } = setup({ maxAttempts: 1 });
    let fail = true;
    let calls = 0;
    receiver.on('payment.paid', () => {
      calls += 1;
      if (fail) throw new Error('not yet');
    });
    const event = paymentEvent();
    await receiver.handle(signedEvent(event));
    await receiver.idle();
    expect((await store.getRun(`event:${event.id}`))?.status).toBe('failed');
    fail = false;
    expect(await receiver.retryFailed(event.id)).toBe(1);
    await receiver.idle();
    expect(calls).toBe(2);
    expect((await store.getRun(`event:${event.id}`))?.status).toBe('done');
    expect(await receiver.retryFailed()).toBe(0);
  });

  it('retryFailed() without an id retries every failed event', async () => {
    const { store, receiver } = setup({ maxAttempts: 1 });
    let fail = true;
    receiver.onAny(() => {
      if (fail) throw new Error('down');
    });
    await Promise.all([receiver.handle(signedEvent()), receiver.handle(signedEvent()), receiver.handle(signedEvent())]);
    await receiver.idle();
    expect(await store.listRuns({ status: 'failed' })).toHaveLength(3);
    fail = false;
    expect(await receiver.retryFailed()).toBe(3);
    await receiver.idle();
    expect(await store.listRuns({ status: 'done' })).toHaveLength(3);
  });

  it('a crash after the ack leaves the event pending; the next start() dispatches it', async () => {
    const store = new MemoryStore();
    const logger = captureLogger();
    // First process: stores and acknowledges, then "crashes" before dispatching.
    const crashed = createReceiver({ store, secrets: SECRET, logger, dispatch: false });
    const event = paymentEvent();
    expect((await crashed.handle(signedEvent(event))).status).toBe(200);
    expect((await store.getRun(`event:${event.id}`))?.status).toBe('pending');

    const next = createReceiver({ store, secrets: SECRET, logger });
    const seen: Payment[] = [];
    next.on('payment.paid', (e) => void seen.push(e.data));
    expect(await next.start()).toBe(1);
    await next.stop();
    expect(seen.map((p) => p.id)).toEqual([event.data.id]);
    expect((await store.getRun(`event:${event.id}`))?.status).toBe('done');
  });

  it('takes over an event whose worker died mid-dispatch once its lease runs out', async () => {
    const store = new MemoryStore();
    // One clock for the receipt, the lease and the receivers, moved by hand: on the wall clock, a
    // 20 ms stall before start() let it take the run at once.
    let now = Date.parse('2030-01-01T00:00:00.000Z');
    const clock = () => new Date(now);
    const crashed = createReceiver({ store, secrets: SECRET, logger: captureLogger(), dispatch: false, clock });
    const event = paymentEvent();
    await crashed.handle(signed(JSON.stringify(event), { timestamp: now / 1000 }));
    expect(await store.claimRun(`event:${event.id}`, { owner: 'dead-worker', leaseMs: 20, now: clock() })).toBeDefined();

    const next = createReceiver({ store, secrets: SECRET, logger: captureLogger(), pollIntervalMs: 5, clock });
    let calls = 0;
    next.onAny(() => void (calls += 1));
    expect(await next.start()).toBe(0);
    now += 21;
    await waitFor(() => calls === 1);
    await next.stop();
    expect(await store.getRun(`event:${event.id}`)).toMatchObject({ status: 'done', attempts: 2 });
  });

  it('logs a store that stays down once, not on every poll, and says when polling works again', async () => {
    const { store, receiver, logger } = setup({ pollIntervalMs: 5 });
    let down = false;
    let polls = 0;
    const listRuns = store.listRuns.bind(store);
    store.listRuns = async (...args) => {
      polls += 1;
      if (down)
        throw new StoreError('The store PostgreSQL db:5432/shop cannot be reached (connect ECONNREFUSED): nothing was written; check that the server is up.');
      return listRuns(...args);
    };
    const said = (level: string, text: string) => logger.lines.filter((line) => line.level === level && String(line.msg ?? line.obj).startsWith(text)).length;
    await receiver.start();
    down = true;
    const before = polls;
    await waitFor(() => polls >= before + 5);
    expect(said('error', 'Webhook receiver background task failed')).toBe(1);
    down = false;
    await waitFor(() => said('info', 'Webhook receiver background task works again') === 1);
    down = true;
    const again = polls;
    await waitFor(() => polls >= again + 5);
    await receiver.stop();
    expect(said('error', 'Webhook receiver background task failed')).toBe(2);
    expect(said('info', 'Webhook receiver background task works again')).toBe(1);
  });

  it('stop() waits for in-flight handlers', async () => {
    const { receiver } = setup();
    let started = false;
    let finished = false;
    receiver.onAny(async () => {
      started = true;
      await new Promise((resolve) => setTimeout(resolve, 30));
      finished = true;
    });
    await receiver.handle(signedEvent());
    // Dispatch starts from the store just after the ack; stop once the handler is running.
    await waitFor(() => started);
    await receiver.stop();
    expect(finished).toBe(true);
  });

  it('prunes payloads of finished events and forgets old ids, keeping ids at least 7 days', async () => {
    const { store, receiver } = setup({ retention: { payloadDays: 1, idDays: 7 } });
    const event = paymentEvent();
    await receiver.handle(signedEvent(event));
    await receiver.idle();
    const day = 86_400_000;
    expect(await receiver.prune(new Date(Date.now() + 2 * day))).toEqual({ payloadsPruned: 1, eventsForgotten: 0 });
    expect(await store.getEvent(event.id)).toMatchObject({ id: event.id, body: undefined });
    // Still deduped: a redelivery after the payload is gone is acknowledged as a duplicate.
    expect((await receiver.handle(signedEvent(event))).body).toMatchObject({ duplicate: true });
    expect(await receiver.prune(new Date(Date.now() + 8 * day))).toEqual({ payloadsPruned: 0, eventsForgotten: 1 });
    expect(() => createReceiver({ store, secrets: SECRET, retention: { idDays: 3 } })).toThrow(/idDays/);
  });
});

describe('types', () => {
  it('narrows handlers by event type', () => {
    const receiver: WebhookReceiver = setup().receiver;
    receiver.on('payment.paid', (event) => {
      expectTypeOf(event.data).toEqualTypeOf<Payment>();
      expectTypeOf(event.data.amount).toEqualTypeOf<string>();
      expectTypeOf(event.type).toEqualTypeOf<'payment.paid'>();
    });
    receiver.on(['invoice.paid', 'invoice.overpaid'], (event) => {
      expectTypeOf(event.data).toEqualTypeOf<Invoice>();
      expectTypeOf(event.type).toEqualTypeOf<'invoice.paid' | 'invoice.overpaid'>();
    });
    receiver.on('something.else', (event) => {
      expectTypeOf(event.data).toEqualTypeOf<unknown>();
    });
    receiver.on('invoice.expired', (event) => {
      // @ts-expect-error an invoice handler never sees a payment event type
      return event.type === 'payment.paid';
    });
  });
});

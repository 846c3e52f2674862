import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { CheckoutClient } from '../../src/client/index.js';
import { ConfigError, InvalidResponseError } from '../../src/errors/index.js';
import { FulfillmentEngine, type FulfillmentContext, type FulfillmentHandlers } from '../../src/fulfillment/index.js';
import type { Payment } from '../../src/schemas/index.js';
import { MemoryStore, type Store } from '../../src/store/index.js';
import { createRunLoop, runKeys } from '../../src/runs/index.js';
import { captureLogger, waitFor } from '../webhooks/helpers.js';
import { FakeReader } from '../support/fake-reader.js';
import { sampleInvoiceDetail, samplePayment, TEST_KEYS } from '../support/fixtures.js';
import { listenOnLoopback } from '../support/ports.js';

/** Handlers that record every call. */
function recorder() {
  const calls: Array<{ outcome: string; id: string; ctx: FulfillmentContext }> = [];
  const record = (outcome: string) => async (resource: { id: string }, ctx: FulfillmentContext) => {
    calls.push({ outcome, id: resource.id, ctx });
  };
  const handlers: FulfillmentHandlers = { paid: record('paid'), underpaid: record('underpaid'), expired: record('expired') };
  return { calls, handlers };
}

const paid = (overrides: Partial<Payment> = {}) => samplePayment({ amount: '25.00', amountReceived: '25.00', status: 'PAID', ...overrides });

describe('FulfillmentEngine', () => {
  it('without a store or handlers (a JavaScript caller) is a ConfigError when built, not a TypeError mid-run', () => {
    for (const store of [undefined, null, {}]) {
      expect(() => new FulfillmentEngine({ store, handlers: {} } as never)).toThrow(ConfigError);
      expect(() => new FulfillmentEngine({ store, handlers: {} } as never)).toThrow(/^FulfillmentEngine needs a store/);
    }
    for (const handlers of [undefined, null, 'paid']) {
      expect(() => new FulfillmentEngine({ store: new MemoryStore(), handlers } as never)).toThrow(
        /^FulfillmentEngine needs handlers: an object with any of paid/,
      );
    }
  });

  it('a confirm read given up by its signal (the receiver stopping) stores and reports nothing', async () => {
    const store = new MemoryStore();
    const news: unknown[] = [];
    const payment = samplePayment({ amountReceived: '25.00', status: 'PAID' });
    // A read held back (a Retry-After) until its caller gives up.
    const reader = new FakeReader();
    let asked = false;
    reader.payments.get = (_id: string, options?: { signal?: AbortSignal }) =>
      new Promise<Payment>((_resolve, reject) => {
        asked = true;
        const signal = options?.signal;
        if (signal?.aborted) reject(signal.reason);
        signal?.addEventListener('abort', () => reject(signal.reason));
      });
    const calls: string[] = [];
    const engine = new FulfillmentEngine({
      store,
      client: reader,
      observer: { news: (n) => void news.push(n) },
      handlers: { paid: async (p) => void calls.push(p.id) },
    });
    const stopping = new AbortController();
    const processing = engine.process({ kind: 'payment', id: payment.id, source: 'webhook', signal: stopping.signal });
    await waitFor(() => asked);
    stopping.abort(new Error('the receiver is stopping'));
    await expect(processing).rejects.toThrow('the receiver is stopping');
    expect(await store.getResource('payment', payment.id)).toBeUndefined();
    expect(news).toEqual([]);
    expect(calls).toEqual([]);
  });

  it('stopping the run loop gives up a read held back by the service: the stop does not wait for it, and the run is due again at once', async () => {
    const store = new MemoryStore();
    const reader = new FakeReader();
    const payment = reader.put(samplePayment({ amountReceived: '25.00', status: 'PAID' }));
    const now = new Date('2030-01-01T00:00:00.000Z');
    const logger = captureLogger();
    let calls = 0;
    const engine = new FulfillmentEngine({ store, client: reader, clock: () => now, logger, handlers: { paid: async () => void (calls += 1) } });
    // A due handler run whose resource was stored without its data: the task must ask the service.
    const key = runKeys.fulfillment('payment', payment.id, 'paid');
    await store.updateResource({ kind: 'payment', id: payment.id, outcome: 'paid' }, now);
    await store.enqueueRun({ key, kind: 'fulfillment', data: { kind: 'payment', id: payment.id, outcome: 'paid', source: 'webhook', late: false } }, now);
    let reading = false;
    reader.payments.get = (_id: string, options?: { signal?: AbortSignal }) =>
      new Promise<Payment>((_resolve, reject) => {
        reading = true;
        const signal = options?.signal;
        if (signal?.aborted) reject(signal.reason);
        signal?.addEventListener('abort', () => reject(signal.reason));
      });
    const loop = createRunLoop({ store, concurrency: 2, clock: () => now, logger, tasks: { fulfillment: engine.task } });
    expect(await loop.kick()).toBe(1);
    await waitFor(() => reading);
    loop.stop();
    await loop.idle(); // without the signal, this waits for the read for ever
    expect(calls).toBe(0);
    expect(await store.listRuns({ status: ['pending', 'running'], dueBy: now.toISOString() })).toMatchObject([{ key, attempts: 1 }]);
    expect(await store.getRun(key)).toMatchObject({ lastError: undefined });
    expect(logger.lines).toContainEqual(expect.objectContaining({ level: 'info', msg: expect.stringContaining(`Stopped while running ${key}`) }));
  });

  it('a Get payment answer without amountReceived, past expiry, is a failed read: no expired handler for a payment that may be paid, nothing stored', async () => {
    const payment = paid({ expiresAt: '2030-01-01T00:00:00.000Z' });
    const { amountReceived: _left, ...answer } = payment;
    const service = Fastify();
    service.get('/v1/payments/:id', async () => answer);
    const client = new CheckoutClient({ baseUrl: `http://127.0.0.1:${await listenOnLoopback(service)}`, ...TEST_KEYS, retries: 0 });
    try {
      const store = new MemoryStore();
      const { calls, handlers } = recorder();
      const engine = new FulfillmentEngine({ store, client, handlers, clock: () => new Date('2030-01-02T00:00:00.000Z') });
      const read = await engine.process({ kind: 'payment', id: payment.id, source: 'webhook' }).catch((error: unknown) => error);
      expect(read).toBeInstanceOf(InvalidResponseError);
      expect((read as InvalidResponseError).fields).toEqual(['amountReceived']);
      expect(calls).toEqual([]);
      expect(await store.getResource('payment', payment.id)).toMatchObject({ outcome: 'pending', open: true });
    } finally {
      await service.close();
    }
  });

  it('runs the paid handler once whatever the source, with a stable key', async () => {
    const reader = new FakeReader();
    const payment = reader.put(paid());
    const { calls, handlers } = recorder();
    const engine = new FulfillmentEngine({ store: new MemoryStore(), handlers, client: reader });
    const results = [];
    for (const source of ['webhook', 'return', 'reconcile', 'webhook'] as const)
      results.push(await engine.process({ kind: 'payment', id: payment.id, source }));
    expect(calls).toHaveLength(1);
    expect(calls[0]!.ctx).toMatchObject({ kind: 'payment', outcome: 'paid', key: `payment:${payment.id}:paid`, source: 'webhook', late: false, attempt: 1 });
    expect(results.map((r) => r.run)).toEqual(['completed', 'already-done', 'already-done', 'already-done']);
    expect(results[0]!.firstLearnedBy).toBe('webhook');
  });

  it('race: webhook, return and reconcile together for 200 paid payments → one call each', async () => {
    const reader = new FakeReader();
    const payments = Array.from({ length: 200 }, () => reader.put(paid()));
    const { calls, handlers } = recorder();
    const store = new MemoryStore();
    // Three engines = three workers with their own lease owner ids, one store.
    const engines = [1, 2, 3].map(() => new FulfillmentEngine({ store, handlers, client: reader }));
    const sources = ['webhook', 'return', 'reconcile'] as const;
    await Promise.all(payments.flatMap((p) => sources.map((source, i) => engines[i]!.process({ kind: 'payment', id: p.id, source }))));
    expect(calls).toHaveLength(200);
    expect(new Set(calls.map((c) => c.id)).size).toBe(200);
  });

  it('decides from Get payment, not from the event: a forged or stale "paid" fulfils nothing', async () => {
    const reader = new FakeReader();
    const unpaid = reader.put(samplePayment({ amountReceived: '0', status: 'CREATED' }));
    const { calls, handlers } = recorder();
    const engine = new FulfillmentEngine({ store: new MemoryStore(), handlers, client: reader });
    const result = await engine.process({ kind: 'payment', id: unpaid.id, source: 'webhook', hint: { ...unpaid, amountReceived: '25.00', status: 'PAID' } });
    expect(result.outcome).toBe('pending');
    expect(calls).toHaveLength(0);
  });

  it('out of order: an older unpaid view after paid leaves the payment paid', async () => {
    const reader = new FakeReader();
    const payment = reader.put(paid({ expiresAt: new Date(Date.now() - 1000).toISOString() }));
    const { calls, handlers } = recorder();
    const store = new MemoryStore();
    const engine = new FulfillmentEngine({ store, handlers, confirm: false });
    await engine.process({ kind: 'payment', id: payment.id, source: 'webhook', hint: payment });
    const stale = { ...payment, amountReceived: '0', status: 'EXPIRED' };
    const result = await engine.process({ kind: 'payment', id: payment.id, source: 'webhook', hint: stale });
    expect(result.outcome).toBe('paid');
    expect(calls.map((c) => c.outcome)).toEqual(['paid']);
    expect((await store.getResource('payment', payment.id))?.snapshot).toMatchObject({ amountReceived: '25.00' });
  });

  it('late money: expired first, then paid → both handlers, paid with late=true', async () => {
    const reader = new FakeReader();
    const expiresAt = new Date(Date.now() - 60_000).toISOString();
    const payment = reader.put(samplePayment({ amountReceived: '0', expiresAt, updatedAt: expiresAt }));
    const { calls, handlers } = recorder();
    const store = new MemoryStore();
    const engine = new FulfillmentEngine({ store, handlers, client: reader });
    await engine.process({ kind: 'payment', id: payment.id, source: 'reconcile' });
    reader.put({ ...payment, amountReceived: payment.amount, updatedAt: new Date().toISOString() });
    await engine.process({ kind: 'payment', id: payment.id, source: 'webhook' });
    expect(calls.map((c) => [c.outcome, c.ctx.late])).toEqual([
      ['expired', false],
      ['paid', true],
    ]);
    expect((await store.getResource('payment', payment.id))?.open).toBe(false);
  });

  it('overpaid goes to paid when there is no overpaid handler, and to overpaid when there is', async () => {
    const reader = new FakeReader();
    const a = reader.put(paid({ amountReceived: '30.00' }));
    const b = reader.put(paid({ amountReceived: '30.00' }));
    const first = recorder();
    await new FulfillmentEngine({ store: new MemoryStore(), handlers: first.handlers, client: reader }).process({
      kind: 'payment',
      id: a.id,
      source: 'webhook',
    });
    expect(first.calls.map((c) => [c.outcome, c.ctx.outcome])).toEqual([['paid', 'overpaid']]);
    const overpaid: string[] = [];
    await new FulfillmentEngine({
      store: new MemoryStore(),
      handlers: { paid: async () => {}, overpaid: async (r) => void overpaid.push(r.id) },
      client: reader,
    }).process({
      kind: 'payment',
      id: b.id,
      source: 'webhook',
    });
    expect(overpaid).toEqual([b.id]);
  });

  it('a throwing handler is retried with backoff, then marked failed, then retried by command', async () => {
    const reader = new FakeReader();
    const payment = reader.put(paid());
    let now = Date.parse('2026-11-22T12:00:00Z');
    let attempts = 0;
    let succeed = false;
    const store = new MemoryStore();
    const engine = new FulfillmentEngine({
      store,
      client: reader,
      maxAttempts: 3,
      backoffMs: 1000,
      clock: () => new Date(now),
      handlers: {
        paid: async () => {
          attempts += 1;
          if (!succeed) throw new Error('warehouse down');
        },
      },
    });
    expect((await engine.process({ kind: 'payment', id: payment.id, source: 'webhook' })).run).toBe('retrying');
    expect(await engine.runDue()).toMatchObject({ retrying: 0, completed: 0 }); // not due yet
    now += 1000;
    expect(await engine.runDue()).toMatchObject({ retrying: 1 });
    now += 2000;
    expect(await engine.runDue()).toMatchObject({ failed: 1 });
    expect(attempts).toBe(3);
    const run = await store.getRun(`payment:${payment.id}:paid`);
    expect(run).toMatchObject({ status: 'failed', lastError: 'warehouse down', attempts: 3 });
    now += 3_600_000;
    expect(await engine.runDue()).toMatchObject({ completed: 0, failed: 0 }); // failed runs wait for a person
    succeed = true;
    expect(await engine.retryFailed()).toBe(1);
    expect(await engine.runDue()).toMatchObject({ completed: 1 });
    expect(attempts).toBe(4);
    expect((await store.getRun(`payment:${payment.id}:paid`))?.status).toBe('done');
  });

  it('a run whose worker died is taken over after the lease, with the same key', async () => {
    const reader = new FakeReader();
    const payment = reader.put(paid());
    const store = new MemoryStore();
    let now = Date.parse('2030-01-01T00:00:00.000Z');
    const key = `payment:${payment.id}:paid`;
    // Worker A claims and "dies" (never completes), on the engine's clock.
    await store.updateResource({ kind: 'payment', id: payment.id, outcome: 'paid', snapshot: payment }, new Date(now));
    await store.enqueueRun(
      { key, kind: 'fulfillment', data: { kind: 'payment', id: payment.id, outcome: 'paid', source: 'webhook', late: false } },
      new Date(now),
    );
    expect(await store.claimRun(key, { owner: 'worker-a', leaseMs: 60_000, now: new Date(now) })).toBeTruthy();
    const { calls, handlers } = recorder();
    const engine = new FulfillmentEngine({ store, handlers, client: reader, clock: () => new Date(now) });
    expect((await engine.process({ kind: 'payment', id: payment.id, source: 'reconcile' })).run).toBe('in-progress');
    now += 61_000;
    expect(await engine.runDue()).toMatchObject({ completed: 1 });
    expect(calls).toHaveLength(1);
    expect(calls[0]!.ctx).toMatchObject({ key, attempt: 2 });
  });

  it('stores the outcome, its handler run and the close in one transaction: a failure queueing the run leaves nothing stored, and the next news fulfils once', async () => {
    const reader = new FakeReader();
    const payment = reader.put(paid());
    const store = new MemoryStore();
    const update = store.updateResource.bind(store);
    let crash = true;
    store.updateResource = async (resource, now, options) => {
      const queue = options?.queue;
      if (!crash || !queue) return update(resource, now, options);
      // Fails inside the transaction, once the run to queue is known.
      return update(resource, now, {
        queue: (record) => {
          queue(record);
          throw new Error('process killed');
        },
      });
    };
    const { calls, handlers } = recorder();
    const engine = new FulfillmentEngine({ store, handlers, client: reader });
    await expect(engine.process({ kind: 'payment', id: payment.id, source: 'reconcile' })).rejects.toThrow('process killed');
    expect(await store.getResource('payment', payment.id)).toBeUndefined();
    expect(await store.listRuns({})).toEqual([]);
    crash = false;
    expect((await engine.process({ kind: 'payment', id: payment.id, source: 'reconcile' })).run).toBe('completed');
    expect(calls).toHaveLength(1);
    expect(await store.getResource('payment', payment.id)).toMatchObject({ outcome: 'paid', open: false });
  });

  it('when the service cannot be read, the resource is still recorded for reconcile', async () => {
    const reader = new FakeReader(); // knows no payment: every read fails
    const store = new MemoryStore();
    const engine = new FulfillmentEngine({ store, handlers: {}, client: reader });
    const id = '7d3f2a10-0000-4000-8000-000000000001';
    await expect(engine.process({ kind: 'payment', id, source: 'webhook' })).rejects.toThrow(/not found/);
    expect(await store.getResource('payment', id)).toMatchObject({ outcome: 'pending', open: true });
  });

  it('an older outcome’s retry after a newer one is superseded, not called', async () => {
    const reader = new FakeReader();
    const expiresAt = new Date(Date.now() - 1000).toISOString();
    const payment = reader.put(samplePayment({ amount: '25.00', amountReceived: '10.00', expiresAt }));
    let now = Date.now();
    const seen: string[] = [];
    const store = new MemoryStore();
    const engine = new FulfillmentEngine({
      store,
      client: reader,
      backoffMs: 1000,
      clock: () => new Date(now),
      handlers: {
        underpaid: async () => {
          seen.push('underpaid');
          throw new Error('mail server down');
        },
        paid: async () => void seen.push('paid'),
      },
    });
    expect((await engine.process({ kind: 'payment', id: payment.id, source: 'webhook' })).run).toBe('retrying');
    reader.put({ ...payment, amountReceived: '25.00' });
    expect((await engine.process({ kind: 'payment', id: payment.id, source: 'webhook' })).run).toBe('completed');
    now += 5000;
    expect(await engine.runDue()).toMatchObject({ superseded: 1, retrying: 0 });
    expect(seen).toEqual(['underpaid', 'paid']);
    expect((await store.getRun(`payment:${payment.id}:underpaid`))?.status).toBe('done');
  });

  it('a handler that runs longer than its lease keeps it (heartbeat): another worker does not run it too', async () => {
    const reader = new FakeReader();
    const payment = reader.put(paid());
    const store = new MemoryStore();
    const key = `payment:${payment.id}:paid`;
    // Leases are measured on this clock, moved by hand; the renewals come every third of the lease in real time.
    let now = Date.parse('2030-01-01T00:00:00Z');
    const clock = () => new Date(now);
    let calls = 0;
    let finish!: () => void;
    const finished = new Promise<void>((resolve) => (finish = resolve));
    const handlers = {
      paid: async () => {
        calls += 1;
        // The first call runs until the test lets it finish; a second one (the bug) would return at once.
        if (calls === 1) await finished;
      },
    };
    const slow = new FulfillmentEngine({ store, client: reader, leaseMs: 900, handlers, clock });
    const other = new FulfillmentEngine({ store, client: reader, leaseMs: 900, handlers, clock });
    const first = slow.process({ kind: 'payment', id: payment.id, source: 'webhook' });
    await waitFor(() => calls === 1);
    const leaseUntil = async () => Date.parse((await store.getRun(key))!.leaseUntil!);
    for (let lease = 0; lease < 3; lease++) {
      const held = await leaseUntil();
      // Just before the lease ends: a renewal carries it past that end.
      now = held - 100;
      await waitFor(async () => (await leaseUntil()) > held);
      // Past the end the lease had before: another worker finds nothing to take over.
      now = held + 100;
      expect(await other.runDue()).toMatchObject({ completed: 0 });
      expect(calls).toBe(1);
    }
    finish();
    expect((await first).run).toBe('completed');
    expect(calls).toBe(1);
  });

  it('invoices are decided from Get invoice (payments in the detail)', async () => {
    const reader = new FakeReader();
    const invoice = sampleInvoiceDetail({ amount: '40', amountReceived: undefined, payments: [{ amount: '40' }] });
    reader.invoicesById.set(invoice.id, invoice);
    const { calls, handlers } = recorder();
    const result = await new FulfillmentEngine({ store: new MemoryStore(), handlers, client: reader }).process({
      kind: 'invoice',
      id: invoice.id,
      source: 'webhook',
    });
    expect(result).toMatchObject({ outcome: 'paid', run: 'completed' });
    expect(calls[0]!.ctx).toMatchObject({ kind: 'invoice', key: `invoice:${invoice.id}:paid` });
  });

  it('a store error while storing the completion does not call the handler a second time', async () => {
    const reader = new FakeReader();
    const payment = reader.put(paid());
    const memory = new MemoryStore();
    let failures = 2;
    // The first two completions fail, as a connection reset or a failed embedded write would.
    const store: Store = Object.assign(Object.create(memory) as Store, {
      completeRun: async (key: string, owner: string, now?: Date) => {
        if (failures-- > 0) throw new Error('connection reset');
        return memory.completeRun(key, owner, now);
      },
    });
    const logger = captureLogger();
    let calls = 0;
    const clockStart = Date.parse('2030-01-01T00:00:00Z');
    let now = clockStart;
    const handlers = { paid: async () => void (calls += 1) };
    const engine = new FulfillmentEngine({ store, client: reader, handlers, leaseMs: 60_000, completionRetryMs: 5, logger, clock: () => new Date(now) });
    expect((await engine.process({ kind: 'payment', id: payment.id, source: 'webhook' })).run).toBe('completed');
    expect((await memory.getRun(`payment:${payment.id}:paid`))?.status).toBe('done');
    // Long after the lease would have run out, nothing is due and nothing runs again.
    now += 3_600_000;
    const other = new FulfillmentEngine({ store: memory, client: reader, handlers, clock: () => new Date(now) });
    expect(await other.runDue()).toMatchObject({ completed: 0 });
    expect(calls).toBe(1);
    expect(logger.lines.filter((line) => line.level === 'warn').map((line) => line.msg)).toEqual([
      'could not store the completion of a handler that returned; trying again',
      'could not store the completion of a handler that returned; trying again',
    ]);
  });

  it('a completion that cannot be stored at all is logged at error with the key', async () => {
    const reader = new FakeReader();
    const payment = reader.put(paid());
    const memory = new MemoryStore();
    const store: Store = Object.assign(Object.create(memory) as Store, {
      completeRun: async () => {
        throw new Error('disk gone');
      },
    });
    const logger = captureLogger();
    const engine = new FulfillmentEngine({ store, client: reader, handlers: { paid: async () => {} }, completionRetries: 2, completionRetryMs: 1, logger });
    await engine.process({ kind: 'payment', id: payment.id, source: 'webhook' });
    const errors = logger.lines.filter((line) => line.level === 'error');
    expect(errors).toHaveLength(1);
    expect(errors[0]!.obj).toMatchObject({ key: `payment:${payment.id}:paid`, tries: 3 });
    expect((await memory.getRun(`payment:${payment.id}:paid`))?.status).toBe('running');
  });

  it('paid in full before expiry and topped up after it is not late', async () => {
    const reader = new FakeReader();
    const start = Date.parse('2030-06-01T10:00:00Z');
    let now = start;
    const at = (ms: number) => new Date(start + ms).toISOString();
    const expiresAt = at(3_600_000);
    const payment = reader.put(paid({ expiresAt, createdAt: at(0), updatedAt: at(60_000) }));
    let failing = true;
    const seen: Array<{ late: boolean; classificationLate: boolean }> = [];
    const engine = new FulfillmentEngine({
      store: new MemoryStore(),
      client: reader,
      backoffMs: 1000,
      clock: () => new Date(now),
      handlers: {
        paid: async (_resource, ctx) => {
          seen.push({ late: ctx.late, classificationLate: ctx.classification.late });
          if (failing) throw new Error('shop down');
        },
      },
    });
    await engine.process({ kind: 'payment', id: payment.id, source: 'webhook' });
    // Topped up after expiry: the service's updatedAt is now past expiresAt.
    now = start + 7_200_000;
    reader.put({ ...payment, amountReceived: '26.00', surplus: '1.00', updatedAt: at(7_000_000) });
    failing = false;
    const result = await engine.process({ kind: 'payment', id: payment.id, source: 'reconcile' });
    expect(result).toMatchObject({ run: 'completed', classification: { late: false } });
    expect(seen).toEqual([
      { late: false, classificationLate: false },
      { late: false, classificationLate: false },
    ]);
  });
  it("news that speaks for another merchant than the confirmed read's is ignored: nothing stored, no handler, a warning and a timeline entry", async () => {
    const store = new MemoryStore();
    const reader = new FakeReader();
    const payment = reader.put({ ...paid(), merchantId: 'm_a' } as Payment);
    const news: Array<{ ok: boolean; error?: string }> = [];
    const { calls, handlers } = recorder();
    const logger = captureLogger();
    const engine = new FulfillmentEngine({ store, client: reader, handlers, logger, observer: { news: (n) => void news.push(n) } });

    const foreign = await engine.process({ kind: 'payment', id: payment.id, source: 'webhook', merchantId: 'm_b' });
    expect(foreign).toMatchObject({ outcome: 'pending', advanced: false, run: 'none' });
    expect(await store.getResource('payment', payment.id)).toBeUndefined();
    expect(calls).toEqual([]);
    expect(news).toEqual([expect.objectContaining({ ok: false, error: expect.stringContaining('belongs to merchant m_a') })]);
    expect(logger.lines.some((line) => line.level === 'warn' && /speaks for merchant m_b: ignored/.test(line.msg ?? ''))).toBe(true);

    // The same news naming the right merchant, or none, is learned as usual.
    const own = await engine.process({ kind: 'payment', id: payment.id, source: 'webhook', merchantId: 'm_a' });
    expect(own).toMatchObject({ outcome: 'paid', advanced: true, run: 'completed' });
    expect(calls.map((call) => call.ctx.merchantId)).toEqual(['m_a']);
  });
});

import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ApiError, NetworkError } from '../../../src/errors/index.js';
import { attachFulfillment, FulfillmentEngine } from '../../../src/fulfillment/index.js';
import { silentLogger } from '../../../src/log/index.js';
import { runKeys } from '../../../src/runs/index.js';
import type { Payment } from '../../../src/schemas/index.js';
import { SqliteStore } from '../../../src/store/index.js';
import { MemoryStore } from '../../../src/store/memory-store.js';
import { createReceiver } from '../../../src/webhooks/index.js';
import { FakeReader } from '../../support/fake-reader.js';
import { samplePayment } from '../../support/fixtures.js';
import { tempDir } from '../../support/temp-dirs.js';
import { captureLogger, paymentEvent, SECRET, signedEvent, waitFor } from '../helpers.js';

/** A promise that a test opens by hand. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

describe('the dispatch queue', () => {
  it('acknowledges a backlog without waiting for dispatch, then dispatches it oldest first, dispatchConcurrency at a time', async () => {
    const store = new MemoryStore();
    const receiver = createReceiver({ store, secrets: [SECRET], logger: captureLogger(), dispatchConcurrency: 3 });
    const { opened, open } = gate();
    const started: string[] = [];
    let running = 0;
    let mostAtOnce = 0;
    receiver.onAny(async (event) => {
      started.push(event.id);
      mostAtOnce = Math.max(mostAtOnce, ++running);
      await opened;
      running -= 1;
    });
    const events = Array.from({ length: 40 }, () => paymentEvent());
    // Every delivery is acknowledged while the handlers hang.
    for (const event of events) expect((await receiver.handle(signedEvent(event))).status).toBe(200);
    await waitFor(() => started.length === 3);
    expect(started).toEqual(events.slice(0, 3).map((event) => event.id));
    open();
    await waitFor(() => started.length === events.length);
    await receiver.idle();
    // Dispatches start oldest first; with three at a time a handler may begin a step ahead of another.
    expect([...started].sort()).toEqual(events.map((event) => event.id).sort());
    started.forEach((id, i) => expect(Math.abs(events.findIndex((event) => event.id === id) - i)).toBeLessThan(3));
    expect(mostAtOnce).toBe(3);
    expect(await store.listRuns({ kind: 'event', status: ['pending', 'running'] })).toEqual([]);
  });

  it('start() does not wait for a backlog left by a crash (the server must listen at once)', async () => {
    const store = new MemoryStore();
    const crashed = createReceiver({ store, secrets: [SECRET], logger: captureLogger(), dispatch: false });
    for (let i = 0; i < 20; i++) await crashed.handle(signedEvent(paymentEvent()));
    const receiver = createReceiver({ store, secrets: [SECRET], logger: captureLogger(), dispatchConcurrency: 2 });
    const { opened, open } = gate();
    let calls = 0;
    receiver.onAny(async () => {
      calls += 1;
      await opened;
    });
    // Resolves with the first two under way while their handlers still hang.
    expect(await receiver.start()).toBe(2);
    open();
    await waitFor(() => calls === 20);
    await receiver.stop();
  });

  it('one at a time, a backlog is dispatched strictly oldest first', async () => {
    const receiver = createReceiver({ store: new MemoryStore(), secrets: [SECRET], logger: captureLogger(), dispatchConcurrency: 1 });
    const { opened, open } = gate();
    const started: string[] = [];
    receiver.onAny(async (event) => {
      started.push(event.id);
      await opened;
    });
    const events = Array.from({ length: 60 }, () => paymentEvent());
    for (const event of events) await receiver.handle(signedEvent(event));
    open();
    await waitFor(() => started.length === events.length);
    await receiver.idle();
    expect(started).toEqual(events.map((event) => event.id));
  });

  it('stop() leaves the stored backlog in the store; start() dispatches it', async () => {
    const dir = await tempDir('ck-dispatch-queue-');
    const store = new SqliteStore({ dir });
    await store.open();
    const receiver = createReceiver({ store, secrets: [SECRET], logger: captureLogger(), dispatchConcurrency: 2 });
    const seen: string[] = [];
    const { opened, open } = gate();
    receiver.onAny(async (event) => {
      seen.push(event.id);
      await opened;
    });
    const events = Array.from({ length: 10 }, () => paymentEvent());
    for (const event of events) await receiver.handle(signedEvent(event));
    await waitFor(() => seen.length === 2);
    const stopping = receiver.stop();
    open();
    await stopping;
    expect(seen).toHaveLength(2);
    expect(await store.listRuns({ kind: 'event', status: 'pending' })).toHaveLength(8);
    // start() does not wait for the backlog: it starts the first two and returns.
    expect(await receiver.start()).toBe(2);
    await waitFor(() => seen.length === events.length);
    expect(seen).toEqual(events.map((event) => event.id));
    await receiver.stop();
    await store.close();
  });
});

describe('stopping while handlers wait', () => {
  it('stop() aborts the signal of dispatches in flight: a handler that gives up then is no failed attempt, its lease is given back, and start() dispatches it again at once', async () => {
    const store = new MemoryStore();
    const receiver = createReceiver({ store, secrets: [SECRET], logger: captureLogger(), dispatchConcurrency: 2 });
    const errors: unknown[] = [];
    receiver.onError((error) => void errors.push(error));
    let calls = 0;
    receiver.onAny(async (_event, delivery) => {
      calls += 1;
      // The first call waits for something slow (say a read held back by a Retry-After) until the stop.
      if (calls === 1) await new Promise((_resolve, reject) => delivery.signal!.addEventListener('abort', () => reject(delivery.signal!.reason)));
    });
    const event = paymentEvent();
    expect((await receiver.handle(signedEvent(event))).status).toBe(200);
    await waitFor(() => calls === 1);
    await receiver.stop();
    const run = await store.getRun(runKeys.event(event.id));
    // Still to do, as after a crash (the claim counted), but with no error recorded and claimable now.
    expect(run).toMatchObject({ status: 'running', attempts: 1 });
    expect(run?.lastError).toBeUndefined();
    expect(Date.parse(run!.leaseUntil!)).toBeLessThanOrEqual(Date.now());
    expect(errors).toEqual([]);
    await receiver.start();
    await waitFor(() => calls === 2);
    await receiver.idle();
    expect(await store.getRun(runKeys.event(event.id))).toMatchObject({ status: 'done', attempts: 2 });
    await receiver.stop();
  });

  it('a handler failing for its own reason while the receiver stops is a failed attempt as ever: recorded, and reported', async () => {
    const store = new MemoryStore();
    const receiver = createReceiver({ store, secrets: [SECRET], logger: captureLogger() });
    const errors: unknown[] = [];
    receiver.onError((error) => void errors.push(error));
    const { opened, open } = gate();
    let started = false;
    receiver.onAny(async () => {
      started = true;
      await opened;
      throw new Error('ERP down');
    });
    const event = paymentEvent();
    await receiver.handle(signedEvent(event));
    await waitFor(() => started);
    const stopping = receiver.stop();
    open();
    await stopping;
    expect(await store.getRun(runKeys.event(event.id))).toMatchObject({ status: 'pending', attempts: 1, lastError: expect.stringContaining('ERP down') });
    expect(errors).toHaveLength(1);
  });

  it('a handler that finishes in spite of the stop is waited for, and its run is done', async () => {
    const store = new MemoryStore();
    const receiver = createReceiver({ store, secrets: [SECRET], logger: captureLogger() });
    const { opened, open } = gate();
    let aborted = false;
    let started = false;
    receiver.onAny(async (_event, delivery) => {
      started = true;
      await opened;
      aborted = delivery.signal!.aborted;
    });
    const event = paymentEvent();
    await receiver.handle(signedEvent(event));
    await waitFor(() => started);
    let stopped = false;
    const stopping = receiver.stop().then(() => (stopped = true));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(stopped).toBe(false);
    open();
    await stopping;
    expect(aborted).toBe(true);
    expect(await store.getRun(runKeys.event(event.id))).toMatchObject({ status: 'done', attempts: 1 });
  });
});

describe('coalesced confirm reads', () => {
  /** A reader whose reads wait for `release()` while `hold` is set. */
  function slowReader() {
    const reader = new FakeReader();
    let hold = gate();
    let holding = false;
    const get = reader.payments.get;
    reader.payments.get = async (id: string) => {
      const payment = await get(id); // counted as a read when it starts
      if (holding) await hold.opened;
      return payment;
    };
    return {
      reader,
      holdReads: () => {
        holding = true;
        hold = gate();
      },
      release: () => {
        holding = false;
        hold.open();
      },
    };
  }

  it('news arriving while a read is queued or in flight shares the next read; news a read already covered costs none', async () => {
    const { reader, holdReads, release } = slowReader();
    // Partly paid and not expired: still open, so every news of it needs confirming.
    const payment = reader.put(samplePayment({ amountReceived: '10.00', status: 'PARTIALLY_PAID', expiresAt: '2030-02-01T00:00:00.000Z' }));
    let now = Date.parse('2030-01-01T00:00:00.000Z');
    const at = (ms: number) => new Date(ms).toISOString();
    const calls: string[] = [];
    // No allowance for clocks of other hosts: this test's clock steps by 10 ms.
    const engine = new FulfillmentEngine({
      store: new MemoryStore(),
      client: reader,
      clock: () => new Date(now),
      coalesceSkewMs: 0,
      handlers: { paid: async (p) => void calls.push(p.id) },
    });
    const input = (storedAt: number) => ({ kind: 'payment' as const, id: payment.id, source: 'webhook' as const, storedAt: at(storedAt) });

    holdReads();
    const first = engine.process(input(now)); // read 1 starts and hangs
    await waitFor(() => reader.reads === 1);
    now += 10;
    // Stored after read 1 began: they may not use it, and share read 2.
    const second = engine.process(input(now));
    const third = engine.process(input(now));
    release();
    await Promise.all([first, second, third]);
    expect(reader.reads).toBe(2);
    // Stored before read 2 began: already confirmed, no read.
    expect((await engine.process(input(now - 5))).outcome).toBe('pending');
    expect(reader.reads).toBe(2);
    // Stored after the last read began: a read of its own.
    now += 10;
    await engine.process(input(now));
    expect(reader.reads).toBe(3);
    expect(calls).toEqual([]);
  });

  it('news of a payment settled, closed and fulfilled costs no read; while its handler has not completed, news is read as before', async () => {
    const reader = new FakeReader();
    const paid = reader.put(samplePayment({ amountReceived: '25.00', status: 'PAID' }));
    const failing = reader.put(samplePayment({ amountReceived: '25.00', status: 'PAID' }));
    const store = new MemoryStore();
    const calls: string[] = [];
    const engine = new FulfillmentEngine({
      store,
      client: reader,
      maxAttempts: 5,
      logger: silentLogger,
      handlers: {
        paid: async (p) => {
          calls.push(p.id);
          if (p.id === failing.id) throw new Error('ERP down');
        },
      },
    });
    const webhook = (id: string) => engine.process({ kind: 'payment', id, source: 'webhook' });

    expect(await webhook(paid.id)).toMatchObject({ outcome: 'paid', run: 'completed' });
    expect(reader.reads).toBe(1);
    expect((await store.getResource('payment', paid.id))?.open).toBe(false);
    // Every later delivery of it (duplicates, a provider's flush): answered from the store.
    for (let i = 0; i < 3; i++) expect(await webhook(paid.id)).toMatchObject({ outcome: 'paid', run: 'already-done', classification: { outcome: 'paid' } });
    expect(reader.reads).toBe(1);
    // The buyer's return still asks the service.
    await engine.process({ kind: 'payment', id: paid.id, source: 'return' });
    expect(reader.reads).toBe(2);

    // Settled and closed, but its handler threw: the run is not done, so news is read and the handler retried by it.
    expect(await webhook(failing.id)).toMatchObject({ outcome: 'paid', run: 'retrying' });
    await webhook(failing.id);
    expect(reader.reads).toBe(4);
    expect(calls).toEqual([paid.id, failing.id]);
  });

  it('only the read is shared, so a slow handler does not hold up the next news of its payment', async () => {
    const reader = new FakeReader();
    const payment = reader.put(samplePayment({ amountReceived: '25.00', status: 'PAID' }));
    const { opened, open } = gate();
    let calls = 0;
    const engine = new FulfillmentEngine({
      store: new MemoryStore(),
      client: reader,
      handlers: {
        paid: async () => {
          calls += 1;
          await opened;
        },
      },
    });
    const webhook = engine.process({ kind: 'payment', id: payment.id, source: 'webhook' });
    await waitFor(() => calls === 1);
    // The buyer's return answers while the handler still runs (it finds the run in progress).
    const returned = await engine.process({ kind: 'payment', id: payment.id, source: 'return', orderId: 'o-1' });
    expect(returned).toMatchObject({ outcome: 'paid', run: 'in-progress' });
    open();
    expect((await webhook).run).toBe('completed');
    expect(calls).toBe(1);
  });

  it('a flushed backlog costs about one read per payment, and every paid payment is fulfilled once', async () => {
    const { reader, holdReads, release } = slowReader();
    const store = new MemoryStore();
    const receiver = createReceiver({ store, secrets: [SECRET], logger: captureLogger(), dispatchConcurrency: 4 });
    const calls = new Map<string, number>();
    const engine = new FulfillmentEngine({
      store,
      client: reader,
      coalesceSkewMs: 0,
      handlers: { paid: async (p) => void calls.set(p.id, (calls.get(p.id) ?? 0) + 1) },
    });
    attachFulfillment(receiver, engine);
    const payments: Payment[] = Array.from({ length: 20 }, () => reader.put(samplePayment({ amountReceived: '25.00', status: 'PAID' })));
    holdReads();
    // created, partially_paid, paid for each payment, interleaved across payments as a provider's flush.
    for (const type of ['payment.created', 'payment.partially_paid', 'payment.paid']) {
      for (const payment of payments) {
        const event = { ...paymentEvent({ type }), id: `evt_${randomUUID()}`, data: payment };
        expect((await receiver.handle(signedEvent(event))).status).toBe(200);
      }
    }
    release();
    await waitFor(async () => (await store.listRuns({ kind: 'event', status: ['pending', 'running'] })).length === 0, 10_000);
    await receiver.idle();
    // Only the reads that began before the whole backlog was stored (at most one per dispatch slot) are read twice.
    expect(reader.reads).toBeGreaterThanOrEqual(payments.length);
    expect(reader.reads).toBeLessThanOrEqual(payments.length + 4);
    expect([...calls.values()]).toEqual(payments.map(() => 1));
  });
});

describe('a service that cannot be asked', () => {
  /** A receiver and engine on SQLite whose confirm reads throw `fail()` while `down` holds. */
  async function outage(fail: () => Error) {
    const dir = await tempDir('ck-dispatch-outage-');
    const store = new SqliteStore({ dir });
    await store.open();
    const logger = captureLogger();
    const receiver = createReceiver({ store, secrets: [SECRET], logger, maxAttempts: 3, backoffMs: 1, maxBackoffMs: 20, pollIntervalMs: 10 });
    const reader = new FakeReader();
    const state = { down: true, failedReads: 0 };
    const get = reader.payments.get;
    reader.payments.get = async (id: string) => {
      if (state.down) {
        state.failedReads += 1;
        throw fail();
      }
      return get(id);
    };
    const calls: string[] = [];
    const engine = new FulfillmentEngine({ store, client: reader, logger: silentLogger, handlers: { paid: async (p) => void calls.push(p.id) } });
    attachFulfillment(receiver, engine);
    const payment = reader.put(samplePayment({ amountReceived: '25.00', status: 'PAID' }));
    const event = { ...paymentEvent(), data: payment };
    return { store, receiver, logger, state, calls, payment, event, close: async () => (await receiver.stop(), await store.close()) };
  }

  /** The service's answer to the confirm read, with that status. */
  const answer = (status: number, code: string, message: string) =>
    new ApiError({ status, code, message, operation: 'payments.get', method: 'GET', url: 'http://127.0.0.1:4010/v1/payments/x' });

  it('keeps retrying an event whose confirm read finds the service down, past maxAttempts, and fulfils it once the service is back', async () => {
    const { store, receiver, logger, state, calls, payment, event, close } = await outage(
      () => new NetworkError('payments.get could not reach the service (GET http://127.0.0.1:4010/v1/payments/x): connect ECONNREFUSED 127.0.0.1:4010.'),
    );
    await receiver.start();
    expect((await receiver.handle(signedEvent(event))).status).toBe(200);
    // Three times maxAttempts, and the run is still waiting for its next try, not failed for good.
    await waitFor(() => state.failedReads >= 9);
    expect(await store.getRun(runKeys.event(event.id))).toMatchObject({ status: expect.stringMatching(/^(pending|running)$/) });
    expect(await store.listRuns({ status: 'failed' })).toEqual([]);
    expect(logger.lines).toContainEqual(
      expect.objectContaining({ level: 'warn', msg: expect.stringContaining('the service could not be asked, so it is retried until it answers') }),
    );
    state.down = false;
    await waitFor(async () => (await store.getRun(runKeys.event(event.id)))?.status === 'done');
    await receiver.idle();
    expect(calls).toEqual([payment.id]);
    expect(await store.listRuns({ status: 'failed' })).toEqual([]);
    await close();
  });

  it('a 429 or 5xx answer is an outage too; an answer that refuses the read (404) still gives up after maxAttempts', async () => {
    const unavailable = await outage(() => answer(503, 'unavailable', 'down for maintenance'));
    await unavailable.receiver.start();
    await unavailable.receiver.handle(signedEvent(unavailable.event));
    await waitFor(() => unavailable.state.failedReads >= 6);
    expect(await unavailable.store.listRuns({ status: 'failed' })).toEqual([]);
    await unavailable.close();

    const refused = await outage(() => answer(404, 'not_found', 'No such payment'));
    await refused.receiver.start();
    await refused.receiver.handle(signedEvent(refused.event));
    await waitFor(async () => (await refused.store.getRun(runKeys.event(refused.event.id)))?.status === 'failed');
    expect(refused.state.failedReads).toBe(3);
    expect(refused.calls).toEqual([]);
    await refused.close();
  });

  it('keeps its attempts through an outage: one failure of its own afterwards is retried, not given up at once', async () => {
    const { store, receiver, state, calls, payment, event, close } = await outage(() => new NetworkError('down'));
    // Once the service is back, another handler of the event fails once (the shop's database, say).
    let thrown = false;
    receiver.on(event.type, async () => {
      if (!state.down && !thrown) {
        thrown = true;
        throw new Error('db hiccup');
      }
    });
    await receiver.start();
    await receiver.handle(signedEvent(event));
    // Three times maxAttempts spent on the outage.
    await waitFor(() => state.failedReads >= 9);
    state.down = false;
    await waitFor(async () => ['done', 'failed'].includes((await store.getRun(runKeys.event(event.id)))?.status ?? ''));
    const run = await store.getRun(runKeys.event(event.id));
    // The order is fulfilled once the service answers, and once only.
    if (run?.status === 'done') await waitFor(() => calls.length === 1);
    await close();
    expect(run?.status).toBe('done');
    expect(run?.outageAttempts).toBeGreaterThanOrEqual(3);
    expect(calls).toEqual([payment.id]);
  });
});

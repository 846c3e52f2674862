import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { StoreError } from '../../src/errors/index.js';
import type { Merchant } from '../../src/schemas/index.js';
import type { Store } from '../../src/store/index.js';
import { operatorViewsContract } from './contract-operator.js';
import { sampleEvent } from './fixtures/sample-event.js';

const HOUR = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();

/**
 * The behaviour every `Store` must have (memory, embedded, PostgreSQL). `factory` gives a fresh,
 * open, empty store per test and a `cleanup` that closes it and removes what it wrote.
 */
export function storeContract(name: string, factory: () => Promise<{ store: Store; cleanup(): Promise<void> }>): void {
  describe(`Store contract: ${name}`, () => {
    let store: Store;
    let cleanup: () => Promise<void>;

    beforeEach(async () => {
      ({ store, cleanup } = await factory());
    });
    afterEach(async () => {
      await cleanup();
    });

    describe('events', () => {
      it('ids that name Object.prototype members are ordinary ids', async () => {
        for (const id of ['constructor', '__proto__', 'toString']) {
          expect(await store.insertEvent(sampleEvent(id))).toEqual({ inserted: true });
          expect((await store.putCheckoutAttempt({ orderId: id, kind: 'payment', idempotencyKey: `k-${id}`, requestHash: 'h' })).inserted).toBe(true);
          expect((await store.updateResource({ kind: 'payment', id, outcome: 'paid', source: 'webhook' })).advanced).toBe(true);
        }
        expect((await store.listEvents()).map((event) => event.id).sort()).toEqual(['__proto__', 'constructor', 'toString']);
        expect((await store.getRun('event:constructor'))?.status).toBe('pending');
      });

      it('stores an event once and gives its body back byte for byte', async () => {
        const first = sampleEvent('evt_1');
        expect(await store.insertEvent(first)).toEqual({ inserted: true });
        expect(await store.insertEvent({ ...first, body: 'a different delivery' })).toEqual({ inserted: false });
        expect(await store.getEvent('evt_1')).toEqual(first);
        expect(await store.getEvent('evt_missing')).toBeUndefined();
      });

      it('keeps awkward bodies exact', async () => {
        const bodies = ['', '\u2028\u2029', 'lone \ud800 surrogate', '"},"body":"x', 'back\\slash\n\r\t', '😀 é e\u0301 \u0000', ' '.repeat(3000)];
        for (const [i, body] of bodies.entries()) await store.insertEvent(sampleEvent(`evt_${i}`, { body }));
        for (const [i, body] of bodies.entries()) expect((await store.getEvent(`evt_${i}`))?.body).toBe(body);
        const listed = await store.listEvents({ limit: 100 });
        expect(new Set(listed.map((event) => event.body))).toEqual(new Set(bodies));
      });

      it('lets exactly one of 50 concurrent inserts of the same id in', async () => {
        const results = await Promise.all(Array.from({ length: 50 }, () => store.insertEvent(sampleEvent('evt_race'))));
        expect(results.filter((result) => result.inserted)).toHaveLength(1);
        expect(await store.listEvents()).toHaveLength(1);
      });

      it('queues the dispatch run event:<id> with the event', async () => {
        await store.insertEvent(sampleEvent('evt_1', { type: 'payment.expired' }));
        const run = await store.getRun('event:evt_1');
        expect(run).toMatchObject({ key: 'event:evt_1', kind: 'event', status: 'pending', attempts: 0, data: { eventId: 'evt_1', type: 'payment.expired' } });
        expect(Date.parse(run?.nextAttemptAt ?? '')).toBeLessThanOrEqual(Date.now());
        await store.insertEvent(sampleEvent('evt_1'));
        expect(await store.listRuns({ kind: 'event' })).toHaveLength(1);
      });

      it("queues each dispatch run at its own caller's now, also among inserts written together", async () => {
        const at = (hour: number) => new Date(Date.UTC(2030, 0, 1, hour));
        await Promise.all([0, 1, 2].map((hour) => store.insertEvent(sampleEvent(`evt_${hour}`), at(hour))));
        for (const hour of [0, 1, 2]) expect((await store.getRun(`event:evt_${hour}`))?.nextAttemptAt).toBe(at(hour).toISOString());
        expect(await store.claimRun('event:evt_0', { owner: 'w', leaseMs: 60_000, now: at(0) })).toMatchObject({ status: 'running' });
      });

      it('lists the runs of several kinds at once, in the order they were queued, and of no kind none', async () => {
        await store.insertEvent(sampleEvent('evt_1'));
        await store.enqueueRun({ key: 'payment:p1:paid', kind: 'fulfillment', data: {} });
        await store.insertEvent(sampleEvent('evt_2'));
        expect((await store.listRuns({ kind: ['event', 'fulfillment'], status: ['pending', 'running'] })).map((run) => run.key)).toEqual([
          'event:evt_1',
          'payment:p1:paid',
          'event:evt_2',
        ]);
        expect((await store.listRuns({ kind: ['fulfillment'] })).map((run) => run.key)).toEqual(['payment:p1:paid']);
        expect(await store.listRuns({ kind: [] })).toEqual([]);
      });

      it('lists events newest first, filtered by type, since, resource, dispatch status and limit', async () => {
        const t0 = Date.parse('2025-03-01T00:00:00.000Z');
        await store.insertEvent(sampleEvent('a', { receivedAt: iso(t0), type: 'payment.created', resourceId: 'pay_1' }));
        await store.insertEvent(sampleEvent('c', { receivedAt: iso(t0 + 2000), type: 'payment.paid', resourceId: 'pay_1' }));
        await store.insertEvent(sampleEvent('b', { receivedAt: iso(t0 + 1000), type: 'payment.paid', resourceId: 'pay_2' }));
        await store.insertEvent(sampleEvent('z', { receivedAt: iso(t0 - 1000), type: 'payment.created', resourceId: 'pay_3' }));
        await store.claimRun('event:b', { owner: 'w', leaseMs: 60_000 });
        await store.completeRun('event:b', 'w');
        const ids = async (filter?: Parameters<Store['listEvents']>[0]) => (await store.listEvents(filter)).map((event) => event.id);
        expect(await ids()).toEqual(['c', 'b', 'a', 'z']);
        expect(await ids({ type: 'payment.paid' })).toEqual(['c', 'b']);
        expect(await ids({ type: 'payment.created' })).toEqual(['a', 'z']);
        expect(await ids({ since: iso(t0 + 1000) })).toEqual(['c', 'b']);
        expect(await ids({ resourceId: 'pay_1' })).toEqual(['c', 'a']);
        expect(await ids({ status: 'done' })).toEqual(['b']);
        expect(await ids({ status: 'pending' })).toEqual(['c', 'a', 'z']);
        expect(await ids({ status: 'pending', since: iso(t0) })).toEqual(['c', 'a']);
        expect(await ids({ limit: 2 })).toEqual(['c', 'b']);
        const [listed] = await store.listEvents({ status: 'done' });
        expect(listed?.run).toMatchObject({ key: 'event:b', status: 'done' });
        expect(listed?.body).toBe(sampleEvent('b').body);
      });

      it('prunes payloads of dispatched events but keeps their ids, and forgets only finished old events', async () => {
        const old = iso(Date.now() - 30 * 24 * HOUR);
        await store.insertEvent(sampleEvent('old_done', { receivedAt: old }));
        await store.insertEvent(sampleEvent('old_pending', { receivedAt: old }));
        await store.insertEvent(sampleEvent('new_done'));
        for (const id of ['old_done', 'new_done']) {
          await store.claimRun(`event:${id}`, { owner: 'w', leaseMs: 60_000 });
          await store.completeRun(`event:${id}`, 'w');
        }
        const weekAgo = iso(Date.now() - 7 * 24 * HOUR);
        expect(await store.prune({ payloadsBefore: weekAgo })).toEqual({ payloadsPruned: 1, eventsForgotten: 0 });
        expect(await store.getEvent('old_done')).toMatchObject({ id: 'old_done', body: undefined });
        expect((await store.getEvent('old_pending'))?.body).toBe(sampleEvent('old_pending').body);
        expect((await store.getEvent('new_done'))?.body).toBe(sampleEvent('new_done').body);
        expect(await store.insertEvent(sampleEvent('old_done'))).toEqual({ inserted: false });
        expect(await store.prune({ payloadsBefore: weekAgo })).toEqual({ payloadsPruned: 0, eventsForgotten: 0 });

        expect(await store.prune({ eventsBefore: weekAgo })).toEqual({ payloadsPruned: 0, eventsForgotten: 1 });
        expect(await store.getEvent('old_done')).toBeUndefined();
        expect(await store.getRun('event:old_done')).toBeUndefined();
        expect(await store.getEvent('old_pending')).toBeDefined();
      });
    });

    describe('runs', () => {
      const newRun = { key: 'payment:pay_1:paid', kind: 'fulfillment' as const, data: { resourceId: 'pay_1', outcome: 'paid' } };

      it('enqueues a run once', async () => {
        const first = await store.enqueueRun(newRun);
        expect(first).toMatchObject({ inserted: true, run: { ...newRun, status: 'pending', attempts: 0 } });
        const again = await store.enqueueRun({ ...newRun, data: { other: true } });
        expect(again).toEqual({ inserted: false, run: first.run });
        expect(await store.getRun(newRun.key)).toEqual(first.run);
      });

      it('leases a due run to one owner at a time until the lease expires', async () => {
        const t0 = Date.now();
        // Due exactly at t0: the clock may tick between reading t0 and enqueueing.
        await store.enqueueRun({ ...newRun, nextAttemptAt: iso(t0) });
        const claimed = await store.claimRun(newRun.key, { owner: 'a', leaseMs: 1000, now: new Date(t0) });
        expect(claimed).toMatchObject({ status: 'running', owner: 'a', attempts: 1, leaseUntil: iso(t0 + 1000) });
        expect(await store.claimRun(newRun.key, { owner: 'b', leaseMs: 1000, now: new Date(t0 + 999) })).toBeUndefined();
        expect(await store.claimRun(newRun.key, { owner: 'b', leaseMs: 1000, now: new Date(t0 + 1000) })).toMatchObject({ owner: 'b', attempts: 2 });
        expect(await store.completeRun(newRun.key, 'a')).toBe(false);
        expect(await store.completeRun(newRun.key, 'b')).toBe(true);
        expect(await store.getRun(newRun.key)).toMatchObject({ status: 'done', owner: 'b', attempts: 2 });
        expect(await store.claimRun(newRun.key, { owner: 'c', leaseMs: 1000, now: new Date(t0 + 10 * HOUR) })).toBeUndefined();
        expect(await store.claimRun('no-such-run', { owner: 'c', leaseMs: 1000 })).toBeUndefined();
      });

      it('lets exactly one of 20 concurrent claims win', async () => {
        await store.enqueueRun(newRun);
        const claims = await Promise.all(Array.from({ length: 20 }, (_, i) => store.claimRun(newRun.key, { owner: `w${i}`, leaseMs: 60_000 })));
        expect(claims.filter((claim) => claim !== undefined)).toHaveLength(1);
      });

      it('does not lease a run before it is due', async () => {
        const t0 = Date.now();
        await store.enqueueRun({ ...newRun, nextAttemptAt: iso(t0 + HOUR) });
        expect(await store.claimRun(newRun.key, { owner: 'a', leaseMs: 1000, now: new Date(t0) })).toBeUndefined();
        expect(await store.claimRun(newRun.key, { owner: 'a', leaseMs: 1000, now: new Date(t0 + HOUR) })).toMatchObject({ attempts: 1 });
      });

      it('renews a lease only for the owner that still holds it', async () => {
        const t0 = Date.now();
        await store.enqueueRun({ ...newRun, nextAttemptAt: iso(t0) });
        await store.claimRun(newRun.key, { owner: 'a', leaseMs: 1000, now: new Date(t0) });
        expect(await store.renewLease(newRun.key, 'b', 1000, new Date(t0 + 500))).toBe(false);
        expect(await store.renewLease(newRun.key, 'a', 1000, new Date(t0 + 500))).toBe(true);
        expect((await store.getRun(newRun.key))?.leaseUntil).toBe(iso(t0 + 1500));
        expect(await store.claimRun(newRun.key, { owner: 'b', leaseMs: 1000, now: new Date(t0 + 1200) })).toBeUndefined();
        expect(await store.claimRun(newRun.key, { owner: 'b', leaseMs: 1000, now: new Date(t0 + 1500) })).toMatchObject({ owner: 'b' });
        expect(await store.renewLease(newRun.key, 'a', 1000, new Date(t0 + 1600))).toBe(false);
        expect(await store.completeRun(newRun.key, 'b')).toBe(true);
        expect(await store.renewLease(newRun.key, 'b', 1000, new Date(t0 + 1700))).toBe(false);
      });

      it('fails back to pending at retryAt (an outage counted apart), or to failed for good; retryRun revives failed runs only', async () => {
        const t0 = Date.now();
        await store.enqueueRun({ ...newRun, nextAttemptAt: iso(t0) });
        await store.claimRun(newRun.key, { owner: 'a', leaseMs: 60_000, now: new Date(t0) });
        expect(await store.failRun(newRun.key, 'b', { error: 'not mine', retryAt: iso(t0) })).toBe(false);
        expect(await store.failRun(newRun.key, 'a', { error: 'HTTP 503', retryAt: iso(t0 + HOUR), outage: true })).toBe(true);
        expect(await store.getRun(newRun.key)).toMatchObject({
          status: 'pending',
          owner: undefined,
          lastError: 'HTTP 503',
          nextAttemptAt: iso(t0 + HOUR),
          attempts: 1,
          outageAttempts: 1,
        });
        expect(await store.claimRun(newRun.key, { owner: 'a', leaseMs: 60_000, now: new Date(t0 + HOUR - 1) })).toBeUndefined();
        expect(await store.retryRun(newRun.key)).toBe(false);

        await store.claimRun(newRun.key, { owner: 'a', leaseMs: 60_000, now: new Date(t0 + HOUR) });
        expect(await store.failRun(newRun.key, 'a', { error: 'handler threw' })).toBe(true);
        expect(await store.getRun(newRun.key)).toMatchObject({ status: 'failed', attempts: 2, outageAttempts: 1, lastError: 'handler threw' });
        expect(await store.claimRun(newRun.key, { owner: 'a', leaseMs: 60_000, now: new Date(t0 + 10 * HOUR) })).toBeUndefined();
        expect(await store.completeRun(newRun.key, 'a')).toBe(false);

        expect(await store.retryRun(newRun.key)).toBe(true);
        expect(await store.getRun(newRun.key)).toMatchObject({ status: 'pending', attempts: 0, outageAttempts: 0 });
        expect(await store.claimRun(newRun.key, { owner: 'b', leaseMs: 60_000 })).toMatchObject({ owner: 'b', attempts: 1 });
      });

      it('lists runs by kind, status and due time', async () => {
        const t0 = Date.now();
        await store.enqueueRun({ key: 'f:due', kind: 'fulfillment', data: {}, nextAttemptAt: iso(t0 - 1000) });
        await store.enqueueRun({ key: 'f:later', kind: 'fulfillment', data: {}, nextAttemptAt: iso(t0 + HOUR) });
        await store.enqueueRun({ key: 'f:done', kind: 'fulfillment', data: {}, nextAttemptAt: iso(t0 - 1000) });
        await store.claimRun('f:done', { owner: 'w', leaseMs: 1000 });
        await store.completeRun('f:done', 'w');
        await store.insertEvent(sampleEvent('evt_1'));
        const keys = async (filter: Parameters<Store['listRuns']>[0]) => (await store.listRuns(filter)).map((run) => run.key).sort();
        expect(await keys({ kind: 'fulfillment' })).toEqual(['f:done', 'f:due', 'f:later']);
        expect(await keys({ kind: 'event' })).toEqual(['event:evt_1']);
        expect(await keys({ status: 'done' })).toEqual(['f:done']);
        expect(await keys({ status: ['pending', 'done'], kind: 'fulfillment' })).toEqual(['f:done', 'f:due', 'f:later']);
        expect(await keys({ kind: 'fulfillment', dueBy: iso(t0) })).toEqual(['f:due']);
        expect(await keys({ kind: 'fulfillment', dueBy: iso(t0 + HOUR) })).toEqual(['f:due', 'f:later']);
        expect(await store.listRuns({ limit: 2 })).toHaveLength(2);
      });

      it('counts runs by kind, status and due time, past any page size', async () => {
        const t0 = Date.now();
        for (let i = 0; i < 120; i++)
          await store.enqueueRun({ key: `payment:p${i}:paid`, kind: 'fulfillment', data: {}, nextAttemptAt: iso(i < 100 ? t0 - 1000 : t0 + HOUR) });
        await store.claimRun('payment:p0:paid', { owner: 'w', leaseMs: 60_000, now: new Date(t0) });
        await store.failRun('payment:p0:paid', 'w', { error: 'gave up', now: new Date(t0) });
        await store.insertEvent(sampleEvent('evt_1'), new Date(t0 - 2000));
        expect(await store.countRuns()).toBe(121);
        expect(await store.countRuns({ kind: 'fulfillment' })).toBe(120);
        expect(await store.countRuns({ kind: 'event' })).toBe(1);
        expect(await store.countRuns({ kind: 'fulfillment', status: 'failed' })).toBe(1);
        expect(await store.countRuns({ status: ['pending', 'failed'] })).toBe(121);
        expect(await store.countRuns({ kind: 'fulfillment', dueBy: iso(t0) })).toBe(99);
        expect(await store.countRuns({ dueBy: iso(t0) })).toBe(100);
        expect(await store.countRuns({ status: 'done' })).toBe(0);
      });

      it('refuses to enqueue an event dispatch run: insertEvent queues it with its event', async () => {
        await expect(store.enqueueRun({ key: 'event:evt_1', kind: 'event', data: {} })).rejects.toThrow(/queued by insertEvent/);
        await expect(store.enqueueRun({ key: 'other', kind: 'event', data: {} })).rejects.toThrow(StoreError);
        await expect(store.enqueueRun({ key: 'event:evt_2', kind: 'fulfillment', data: {} })).rejects.toThrow(StoreError);
        expect(await store.listRuns()).toEqual([]);
        await store.insertEvent(sampleEvent('evt_1'));
        const run = await store.getRun('event:evt_1');
        expect(await store.enqueueRun({ key: 'event:evt_1', kind: 'event', data: { other: true } })).toEqual({ inserted: false, run });
        await expect(store.enqueueRun({ key: 'event:evt_1', kind: 'fulfillment', data: {} })).rejects.toThrow(StoreError);
      });
    });

    describe('resources', () => {
      const paidSnapshot = { id: 'pay_1', status: 'PAID', amountReceived: '10' };

      it('moves the outcome forward only', async () => {
        const created = await store.updateResource({ kind: 'payment', id: 'pay_1', environment: 'test', orderId: 'order_1', source: 'checkout' });
        expect(created).toMatchObject({ advanced: false, record: { kind: 'payment', id: 'pay_1', outcome: 'pending', open: true, orderId: 'order_1' } });
        expect(await store.updateResource({ kind: 'payment', id: 'pay_1', outcome: 'expired', source: 'reconcile' })).toMatchObject({
          advanced: true,
          record: { outcome: 'expired', outcomeSource: 'reconcile' },
        });
        expect(await store.updateResource({ kind: 'payment', id: 'pay_1', outcome: 'paid', source: 'webhook' })).toMatchObject({
          advanced: true,
          record: { outcome: 'paid', outcomeSource: 'webhook' },
        });
        for (const outcome of ['pending', 'underpaid', 'expired', 'overpaid'] as const) {
          expect(await store.updateResource({ kind: 'payment', id: 'pay_1', outcome, source: 'reconcile' })).toMatchObject({
            advanced: false,
            record: { outcome: 'paid', outcomeSource: 'webhook' },
          });
        }
        expect(await store.getResource('payment', 'pay_1')).toMatchObject({ outcome: 'paid', orderId: 'order_1', environment: 'test' });
        expect(await store.getResource('invoice', 'pay_1')).toBeUndefined();
      });

      it('keeps the newer snapshot when an older outcome arrives late', async () => {
        await store.updateResource({ kind: 'payment', id: 'pay_1', outcome: 'paid', snapshot: paidSnapshot, expiresAt: '2025-01-01T01:00:00.000Z' });
        const late = await store.updateResource({
          kind: 'payment',
          id: 'pay_1',
          outcome: 'pending',
          snapshot: { id: 'pay_1', status: 'CREATED', amountReceived: '0' },
          expiresAt: '2024-12-31T00:00:00.000Z',
        });
        expect(late.record).toMatchObject({ outcome: 'paid', snapshot: paidSnapshot, expiresAt: '2025-01-01T01:00:00.000Z' });
        expect((await store.getResource('payment', 'pay_1'))?.snapshot).toEqual(paidSnapshot);
      });

      it('late is fixed by the news that first paid, and a later top-up never rewrites it', async () => {
        expect((await store.updateResource({ kind: 'payment', id: 'pay_l', outcome: 'pending', late: true })).record.late).toBeUndefined();
        expect((await store.updateResource({ kind: 'payment', id: 'pay_l', outcome: 'paid', late: false })).record.late).toBe(false);
        expect((await store.updateResource({ kind: 'payment', id: 'pay_l', outcome: 'overpaid', late: true })).record.late).toBe(false);
        expect((await store.getResource('payment', 'pay_l'))?.late).toBe(false);
        // Expired first, then paid after expiry: late from that news.
        await store.updateResource({ kind: 'payment', id: 'pay_m', outcome: 'expired' });
        expect((await store.updateResource({ kind: 'payment', id: 'pay_m', outcome: 'overpaid', late: true })).record).toMatchObject({
          outcome: 'overpaid',
          late: true,
        });
        // First seen already paid.
        expect((await store.updateResource({ kind: 'invoice', id: 'inv_l', outcome: 'paid', late: true })).record.late).toBe(true);
      });

      it('lists open resources and those without news since a time', async () => {
        const t0 = Date.parse('2025-03-01T00:00:00.000Z');
        await store.updateResource({ kind: 'payment', id: 'pay_old' }, new Date(t0));
        await store.updateResource({ kind: 'payment', id: 'pay_new' }, new Date(t0 + HOUR));
        await store.updateResource({ kind: 'invoice', id: 'inv_1' }, new Date(t0));
        await store.updateResource({ kind: 'payment', id: 'pay_closed', outcome: 'paid', open: false }, new Date(t0));
        const ids = async (filter: Parameters<Store['listResources']>[0]) => (await store.listResources(filter)).map((record) => record.id).sort();
        expect(await ids({ open: true })).toEqual(['inv_1', 'pay_new', 'pay_old']);
        expect(await ids({ open: false })).toEqual(['pay_closed']);
        expect(await ids({ open: true, kind: 'payment', lastNewsBefore: iso(t0) })).toEqual(['pay_old']);
        await store.updateResource({ kind: 'payment', id: 'pay_old', open: false });
        expect(await ids({ open: true, kind: 'payment' })).toEqual(['pay_new']);
      });
      it("takes the service's referenceId as the order id only where none was given: a given order id stays", async () => {
        const snapshot = (referenceId: string, id = 'pay_ref') => ({ id, referenceId, amount: '1', status: 'PENDING' }) as never;
        await store.updateResource({ kind: 'payment', id: 'pay_ref', orderId: 'tenant-a/1001', source: 'checkout', snapshot: snapshot('1001') });
        await store.updateResource({ kind: 'payment', id: 'pay_ref', source: 'webhook', snapshot: snapshot('1001') });
        expect((await store.getResource('payment', 'pay_ref'))?.orderId).toBe('tenant-a/1001');
        await store.updateResource({ kind: 'payment', id: 'pay_else', source: 'webhook', snapshot: snapshot('order-9', 'pay_else') });
        expect((await store.getResource('payment', 'pay_else'))?.orderId).toBe('order-9');
        await store.updateResource({ kind: 'payment', id: 'pay_else', orderId: 'order-10' });
        expect((await store.getResource('payment', 'pay_else'))?.orderId).toBe('order-10');
      });
    });

    describe('checkout attempts', () => {
      it('inserts the attempt for an order once, then completes it', async () => {
        const attempt = { orderId: 'order_1', kind: 'payment' as const, idempotencyKey: 'idem_1', requestHash: 'hash_1' };
        const first = await store.putCheckoutAttempt(attempt);
        expect(first).toMatchObject({ inserted: true, attempt: { ...attempt, status: 'sending', resourceId: undefined } });
        const again = await store.putCheckoutAttempt({ ...attempt, idempotencyKey: 'idem_2', requestHash: 'hash_2' });
        expect(again).toMatchObject({ inserted: false, attempt: { idempotencyKey: 'idem_1', requestHash: 'hash_1' } });
        const done = await store.completeCheckoutAttempt('order_1', { resourceId: 'pay_1', checkoutUrl: 'https://pay.example/c/1' });
        expect(done).toMatchObject({ status: 'created', resourceId: 'pay_1', checkoutUrl: 'https://pay.example/c/1', idempotencyKey: 'idem_1' });
        expect(await store.getCheckoutAttempt('order_1')).toEqual(done);
        expect(await store.getCheckoutAttempt('order_2')).toBeUndefined();
        await expect(store.completeCheckoutAttempt('order_2', { resourceId: 'pay_2', checkoutUrl: undefined })).rejects.toThrow(/putCheckoutAttempt/);
      });

      it('a refused attempt gives way to the next number only, with its own key and body', async () => {
        const first = { orderId: 'order_r', kind: 'payment' as const, idempotencyKey: 'idem_r', requestHash: 'hash_1' };
        expect((await store.putCheckoutAttempt(first)).attempt).toMatchObject({ number: 1, status: 'sending' });
        expect(await store.releaseCheckoutAttempt('order_r', 2)).toBe(false);
        expect(await store.releaseCheckoutAttempt('order_r', 1)).toBe(true);
        expect(await store.releaseCheckoutAttempt('order_r', 1)).toBe(false);
        expect(await store.getCheckoutAttempt('order_r')).toMatchObject({ number: 1, status: 'refused' });
        // A stale caller (same number) and a skipped number get the refused attempt back.
        expect(await store.putCheckoutAttempt({ ...first, number: 1 })).toMatchObject({ inserted: false, attempt: { status: 'refused' } });
        expect(await store.putCheckoutAttempt({ ...first, number: 3 })).toMatchObject({ inserted: false, attempt: { status: 'refused' } });
        const second = await store.putCheckoutAttempt({ ...first, number: 2, idempotencyKey: 'idem_r~2', requestHash: 'hash_2' });
        expect(second).toMatchObject({
          inserted: true,
          attempt: { number: 2, status: 'sending', idempotencyKey: 'idem_r~2', requestHash: 'hash_2', resourceId: undefined },
        });
        expect(await store.putCheckoutAttempt({ ...first, number: 3 })).toMatchObject({ inserted: false, attempt: { number: 2 } });
        expect(await store.completeCheckoutAttempt('order_r', { resourceId: 'pay_r', checkoutUrl: undefined })).toMatchObject({ number: 2, status: 'created' });
        // Only a sending attempt is released: a created one stands.
        expect(await store.releaseCheckoutAttempt('order_r', 2)).toBe(false);
      });
    });

    describe("partner tenants' merchants", () => {
      const merchant = (merchantId: string, externalTenantId: string) =>
        ({ merchantId, externalTenantId, name: 'Shop', email: 'shop@example.com', environment: 'test' }) as unknown as Merchant;
      const tenant = {
        tenantId: 't-1',
        environment: 'test' as const,
        idempotencyKey: 'idem_t1',
        requestHash: 'hash_1',
        name: 'Shop',
        email: 'shop@example.com',
      };

      it("inserts a tenant's try once per environment, completes it with the merchant, and finds it by tenant and by merchant id", async () => {
        expect(await store.putTenantMerchant(tenant)).toMatchObject({
          inserted: true,
          tenant: { ...tenant, number: 1, status: 'sending', merchantId: undefined },
        });
        expect(await store.putTenantMerchant({ ...tenant, idempotencyKey: 'other', requestHash: 'hash_2' })).toMatchObject({
          inserted: false,
          tenant: { idempotencyKey: 'idem_t1', requestHash: 'hash_1' },
        });
        // The same tenant in the other environment is another merchant.
        expect(await store.putTenantMerchant({ ...tenant, environment: 'live', idempotencyKey: 'idem_t1_live' })).toMatchObject({ inserted: true });
        const done = await store.completeTenantMerchant('t-1', 'test', merchant('m-1', 't-1'));
        expect(done).toMatchObject({ status: 'created', merchantId: 'm-1', snapshot: { merchantId: 'm-1', externalTenantId: 't-1' } });
        // A replayed answer changes nothing.
        expect(await store.completeTenantMerchant('t-1', 'test', merchant('m-1', 't-1'))).toEqual(done);
        expect(await store.getTenantMerchant('t-1', 'test')).toEqual(done);
        expect(await store.findTenantByMerchantId('m-1')).toEqual(done);
        expect(await store.findTenantByMerchantId('m-2')).toBeUndefined();
        expect(await store.getTenantMerchant('t-2', 'test')).toBeUndefined();
        await expect(store.completeTenantMerchant('t-2', 'test', merchant('m-2', 't-2'))).rejects.toThrow(/putTenantMerchant/);
        expect((await store.listTenantMerchants()).map((t) => `${t.tenantId}/${t.environment}`)).toEqual(['t-1/test', 't-1/live']);
        expect((await store.listTenantMerchants({ environment: 'live' })).map((t) => t.idempotencyKey)).toEqual(['idem_t1_live']);
        expect((await store.listTenantMerchants({ limit: 1, offset: 1 })).map((t) => t.environment)).toEqual(['live']);
      });

      it('a refused try gives way to the next number only; a created merchant stands', async () => {
        const first = { ...tenant, tenantId: 't-r' };
        await store.putTenantMerchant(first);
        expect(await store.releaseTenantMerchant('t-r', 'test', 2)).toBe(false);
        expect(await store.releaseTenantMerchant('t-r', 'test', 1)).toBe(true);
        expect(await store.putTenantMerchant({ ...first, number: 3 })).toMatchObject({ inserted: false, tenant: { number: 1, status: 'refused' } });
        const second = await store.putTenantMerchant({ ...first, number: 2, idempotencyKey: 'idem_t1~2', email: 'fixed@example.com' });
        expect(second).toMatchObject({ inserted: true, tenant: { number: 2, status: 'sending', idempotencyKey: 'idem_t1~2', email: 'fixed@example.com' } });
        expect(await store.completeTenantMerchant('t-r', 'test', merchant('m-r', 't-r'))).toMatchObject({ number: 2, status: 'created' });
        expect(await store.releaseTenantMerchant('t-r', 'test', 2)).toBe(false);
        // Two merchants are never recorded for one merchant id.
        await store.putTenantMerchant({ ...tenant, tenantId: 't-dup' });
        await expect(store.completeTenantMerchant('t-dup', 'test', merchant('m-r', 't-dup'))).rejects.toThrow();
      });
    });

    describe("tenants' own credentials, sealed", () => {
      it('puts once, replaces, reads, lists and deletes one sealed value per tenant and environment', async () => {
        const at = new Date('2030-01-01T00:00:00.000Z');
        expect(await store.putTenantCredentials({ tenantId: 't-c', environment: 'test', sealed: 'v1.aaaa.1', keyId: 'aaaa' }, at)).toBe(true);
        expect(await store.putTenantCredentials({ tenantId: 't-c', environment: 'live', sealed: 'v1.aaaa.2', keyId: 'aaaa' }, at)).toBe(true);
        // A second put does not overwrite what another save stored: replacing takes the value read.
        expect(await store.putTenantCredentials({ tenantId: 't-c', environment: 'test', sealed: 'v1.cccc.9', keyId: 'cccc' }, at)).toBe(false);
        expect((await store.getTenantCredentials('t-c', 'test'))?.sealed).toBe('v1.aaaa.1');
        expect(await store.resealTenantCredentials('t-c', 'test', 'v1.aaaa.1', { sealed: 'v1.bbbb.3', keyId: 'bbbb' }, at)).toBe(true);
        expect(await store.getTenantCredentials('t-c', 'test')).toEqual({
          tenantId: 't-c',
          environment: 'test',
          sealed: 'v1.bbbb.3',
          keyId: 'bbbb',
          updatedAt: at.toISOString(),
        });
        expect((await store.listTenantCredentials()).map((c) => `${c.environment}:${c.sealed}`)).toEqual(['test:v1.bbbb.3', 'live:v1.aaaa.2']);
        expect((await store.listTenantCredentials({ limit: 1, offset: 1 })).map((c) => c.environment)).toEqual(['live']);
        expect(await store.deleteTenantCredentials('t-c', 'live')).toBe(true);
        expect(await store.deleteTenantCredentials('t-c', 'live')).toBe(false);
        expect(await store.getTenantCredentials('t-c', 'live')).toBeUndefined();
      });

      it('re-seals only a value still as it was read: a rotation never overwrites credentials stored meanwhile', async () => {
        await store.putTenantCredentials({ tenantId: 't-s', environment: 'test', sealed: 'v1.old.1', keyId: 'old' });
        // Another save replaces them after the rotation read v1.old.1.
        expect(await store.resealTenantCredentials('t-s', 'test', 'v1.old.1', { sealed: 'v1.old.2', keyId: 'old' })).toBe(true);
        expect(await store.resealTenantCredentials('t-s', 'test', 'v1.old.1', { sealed: 'v1.new.1', keyId: 'new' })).toBe(false);
        expect((await store.getTenantCredentials('t-s', 'test'))?.sealed).toBe('v1.old.2');
        expect(await store.resealTenantCredentials('t-s', 'test', 'v1.old.2', { sealed: 'v1.new.2', keyId: 'new' })).toBe(true);
        expect(await store.getTenantCredentials('t-s', 'test')).toMatchObject({ sealed: 'v1.new.2', keyId: 'new' });
      });
    });

    describe("the caller's clock", () => {
      it("every stamp and due time follows the caller's now, not the wall clock", async () => {
        // Far from the wall clock either way: a store that read its own clock would show it here.
        for (const t0 of [Date.parse('2001-01-01T00:00:00.000Z'), Date.parse('2099-01-01T00:00:00.000Z')]) {
          const key = `f:clock:${t0}`;
          const queued = await store.enqueueRun({ key, kind: 'fulfillment', data: {} }, new Date(t0));
          expect(queued.run).toMatchObject({ createdAt: iso(t0), nextAttemptAt: iso(t0) });
          await store.claimRun(key, { owner: 'a', leaseMs: 1000, now: new Date(t0) });
          expect(await store.failRun(key, 'a', { error: 'x', now: new Date(t0 + 1) })).toBe(true);
          expect(await store.getRun(key)).toMatchObject({ status: 'failed', updatedAt: iso(t0 + 1) });
          expect(await store.retryRun(key, new Date(t0 + 2))).toBe(true);
          expect(await store.getRun(key)).toMatchObject({ status: 'pending', nextAttemptAt: iso(t0 + 2) });
          expect(await store.listRuns({ kind: 'fulfillment', dueBy: iso(t0 + 2) })).toEqual([expect.objectContaining({ key })]);
          await store.claimRun(key, { owner: 'a', leaseMs: 1000, now: new Date(t0 + 3) });
          expect(await store.completeRun(key, 'a', new Date(t0 + 4))).toBe(true);
          expect(await store.getRun(key)).toMatchObject({ status: 'done', completedAt: iso(t0 + 4) });
          expect(await store.acquireLock(`lock:${t0}`, 'a', 1000, new Date(t0))).toBe(true);
          expect(await store.acquireLock(`lock:${t0}`, 'b', 1000, new Date(t0 + 999))).toBe(false);
          expect(await store.acquireLock(`lock:${t0}`, 'b', 1000, new Date(t0 + 1000))).toBe(true);
          const order = `order:${t0}`;
          expect(
            (await store.putCheckoutAttempt({ orderId: order, kind: 'payment', idempotencyKey: 'k', requestHash: 'h' }, new Date(t0))).attempt,
          ).toMatchObject({ createdAt: iso(t0) });
          expect(await store.completeCheckoutAttempt(order, { resourceId: 'p', checkoutUrl: undefined }, new Date(t0 + 5))).toMatchObject({
            updatedAt: iso(t0 + 5),
          });
        }
      });
    });

    describe('locks', () => {
      it('are exclusive, renewable by their owner, expire after their TTL and are released by their owner only', async () => {
        expect(await store.acquireLock('reconcile', 'a', 60_000)).toBe(true);
        expect(await store.acquireLock('reconcile', 'b', 60_000)).toBe(false);
        expect(await store.acquireLock('reconcile', 'a', 60_000)).toBe(true);
        expect(await store.acquireLock('other', 'b', 60_000)).toBe(true);
        await store.releaseLock('reconcile', 'b');
        expect(await store.acquireLock('reconcile', 'b', 60_000)).toBe(false);
        await store.releaseLock('reconcile', 'a');
        // The TTL on the caller's clock (a loaded machine's stall between two wall-clock reads must not expire it).
        const t0 = Date.parse('2030-01-01T00:00:00.000Z');
        expect(await store.acquireLock('reconcile', 'b', 500, new Date(t0))).toBe(true);
        expect(await store.acquireLock('reconcile', 'a', 500, new Date(t0 + 499))).toBe(false);
        expect(await store.acquireLock('reconcile', 'a', 60_000, new Date(t0 + 500))).toBe(true);
      });
    });

    describe('dead letters', () => {
      it('keeps them with an id, newest first', async () => {
        const first = await store.insertDeadLetter({ receivedAt: iso(1000), reason: 'bad JSON', body: '{"id":', headers: { 'webhook-id': 'msg_1' } });
        const second = await store.insertDeadLetter({ receivedAt: iso(2000), reason: 'no type', body: '{}', headers: {} });
        expect(first.id).toEqual(expect.any(String));
        expect(first.id).not.toBe(second.id);
        expect(await store.listDeadLetters()).toEqual([second, first]);
        expect(await store.listDeadLetters(1)).toEqual([second]);
      });
    });

    describe('text no SQL database keeps as it is', () => {
      // NUL and lone surrogates: what a handler's error, the service's answer or an off-spec id may carry.
      const awkward = 'a\u0000b \ud800 c\udfff d 😀';
      const stored = 'a\ufffdb \ufffd c\ufffd d 😀';

      it('stores every write that holds a NUL or a lone surrogate, each as U+FFFD, and finds it by what was asked', async () => {
        const event = sampleEvent(`evt_${awkward}`, { type: awkward, resourceId: awkward, body: awkward });
        expect(await store.insertEvent(event)).toEqual({ inserted: true });
        expect(await store.insertEvent(event)).toEqual({ inserted: false });
        expect(await store.getEvent(event.id)).toMatchObject({ id: `evt_${stored}`, type: stored, resourceId: stored, body: awkward });
        expect(await store.listEvents({ type: awkward })).toHaveLength(1);

        const key = `payment:${awkward}:paid`;
        await store.enqueueRun({ key, kind: 'fulfillment', data: { [awkward]: [awkward], note: awkward } });
        expect(await store.claimRun(key, { owner: awkward, leaseMs: 60_000 })).toBeDefined();
        expect(await store.failRun(key, awkward, { error: `handler threw: ${awkward}` })).toBe(true);
        expect(await store.getRun(key)).toMatchObject({
          key: `payment:${stored}:paid`,
          status: 'failed',
          lastError: `handler threw: ${stored}`,
          data: { [stored]: [stored], note: stored },
        });

        const { record } = await store.updateResource({
          kind: 'payment',
          id: awkward,
          orderId: awkward,
          outcome: 'paid',
          source: 'webhook',
          snapshot: { id: awkward, metadata: { [awkward]: awkward } },
        });
        expect(record).toMatchObject({ id: stored, orderId: stored, outcome: 'paid', snapshot: { id: stored, metadata: { [stored]: stored } } });
        expect(await store.getResource('payment', awkward)).toEqual(record);

        await store.appendActivity({ subject: `payment:${awkward}`, kind: 'handler', data: { error: awkward } });
        expect(await store.listActivity({ subject: `payment:${awkward}` })).toMatchObject([{ subject: `payment:${stored}`, data: { error: stored } }]);

        const letter = await store.insertDeadLetter({ receivedAt: iso(1000), reason: awkward, body: awkward, headers: { [awkward]: awkward } });
        expect(letter).toMatchObject({ reason: stored, body: awkward, headers: { [stored]: stored } });
        expect(await store.listDeadLetters()).toEqual([letter]);

        expect((await store.putCheckoutAttempt({ orderId: awkward, kind: 'payment', idempotencyKey: awkward, requestHash: 'h' })).attempt).toMatchObject({
          orderId: stored,
          idempotencyKey: stored,
        });
        expect(await store.acquireLock(awkward, awkward, 60_000)).toBe(true);
        expect(await store.acquireLock(awkward, 'someone else', 60_000)).toBe(false);
      });
    });

    // pages, the overview's counts and timelines. Only the memory and embedded stores cap timelines.
    operatorViewsContract(() => store);
  });
}

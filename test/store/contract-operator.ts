import { describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/index.js';
import { sampleEvent } from './fixtures/sample-event.js';

const T0 = Date.parse('2030-06-01T12:00:00.000Z');
const MINUTE = 60_000;
const iso = (ms: number) => new Date(ms).toISOString();
const at = (ms: number) => new Date(ms);

/**
 * What the operator console and the metrics need of every store: pages of each list,
 * the overview's counts and the timelines. Part of `storeContract`: `store()` is that test's fresh store.
 */
export function operatorViewsContract(store: () => Store): void {
  describe("the operator's views", () => {
    it('pages events newest first with offset and limit, filters included', async () => {
      for (let i = 0; i < 7; i++)
        await store().insertEvent(
          sampleEvent(`e${i}`, { receivedAt: iso(T0 + i * 1000), type: i % 2 ? 'payment.paid' : 'payment.created' }),
          at(T0 + i * 1000),
        );
      const ids = async (filter: Parameters<Store['listEvents']>[0]) => (await store().listEvents(filter)).map((event) => event.id);
      expect(await ids({ limit: 3 })).toEqual(['e6', 'e5', 'e4']);
      expect(await ids({ limit: 3, offset: 3 })).toEqual(['e3', 'e2', 'e1']);
      expect(await ids({ limit: 3, offset: 6 })).toEqual(['e0']);
      expect(await ids({ limit: 3, offset: 7 })).toEqual([]);
      expect(await ids({ type: 'payment.paid', limit: 2, offset: 1 })).toEqual(['e3', 'e1']);
      expect(await ids({ status: 'pending', limit: 2, offset: 5 })).toEqual(['e1', 'e0']);
    });

    it('pages runs oldest or newest first, and resources, with the reconcile filter', async () => {
      for (let i = 0; i < 5; i++) await store().enqueueRun({ key: `payment:p${i}:paid`, kind: 'fulfillment', data: { i } }, at(T0 + i));
      const keys = async (filter: Parameters<Store['listRuns']>[0]) => (await store().listRuns(filter)).map((run) => run.key);
      expect(await keys({ kind: 'fulfillment', limit: 2, offset: 1 })).toEqual(['payment:p1:paid', 'payment:p2:paid']);
      expect(await keys({ kind: 'fulfillment', limit: 2, newestFirst: true })).toEqual(['payment:p4:paid', 'payment:p3:paid']);
      expect(await keys({ kind: 'fulfillment', status: 'pending', limit: 2, offset: 4, newestFirst: true })).toEqual(['payment:p0:paid']);

      const sources = ['webhook', 'reconcile', 'reconcile', 'webhook', 'reconcile'] as const;
      for (const [i, source] of sources.entries()) await store().updateResource({ kind: 'payment', id: `p${i}`, outcome: 'paid', source }, at(T0 + i));
      await store().updateResource({ kind: 'invoice', id: 'i0', outcome: 'expired', source: 'reconcile' }, at(T0 + 9));
      const ids = async (filter: Parameters<Store['listResources']>[0]) => (await store().listResources(filter)).map((record) => `${record.kind}:${record.id}`);
      expect(await ids({ kind: 'payment', limit: 2, offset: 1 })).toEqual(['payment:p1', 'payment:p2']);
      expect(await ids({ kind: 'payment', limit: 2, newestFirst: true })).toEqual(['payment:p4', 'payment:p3']);
      expect(await ids({ outcomeSource: 'reconcile', newestFirst: true })).toEqual(['invoice:i0', 'payment:p4', 'payment:p2', 'payment:p1']);
      expect(await ids({ outcomeSource: 'reconcile', kind: 'payment', limit: 1, offset: 1 })).toEqual(['payment:p2']);
    });

    it('finds a resource by id, order id, e-mail in any case or event id, and filters by outcome, handler state, date and amount', async () => {
      const snapshot = (amount: string, email?: string) => ({ amount, amountReceived: amount, ...(email ? { email } : {}) });
      await store().updateResource(
        { kind: 'payment', id: 'pay_a', orderId: 'A-1001', outcome: 'paid', source: 'webhook', snapshot: snapshot('42.10', ' Buyer@Example.com ') },
        at(T0),
      );
      await store().updateResource(
        { kind: 'payment', id: 'pay_b', orderId: 'A-1002', outcome: 'overpaid', source: 'reconcile', snapshot: snapshot('9.5') },
        at(T0 + MINUTE),
      );
      await store().updateResource(
        { kind: 'invoice', id: 'inv_c', orderId: 'A-1003', outcome: 'pending', snapshot: snapshot('1000', 'other@example.com') },
        at(T0 + 2 * MINUTE),
      );
      await store().updateResource(
        { kind: 'payment', id: 'pay_d', outcome: 'paid', snapshot: { ...snapshot('not a number', 'buyer@example.com'), referenceId: 'B-1' } },
        at(T0 + 3 * MINUTE),
      );
      await store().insertEvent(sampleEvent('evt_b', { resourceKind: 'payment', resourceId: 'pay_b' }), at(T0));
      // Handler runs of the current outcomes: a's done, b's failed for good, d's running; c has none.
      await store().enqueueRun({ key: 'payment:pay_a:paid', kind: 'fulfillment', data: {} }, at(T0));
      await store().claimRun('payment:pay_a:paid', { owner: 'w', leaseMs: MINUTE, now: at(T0) });
      await store().completeRun('payment:pay_a:paid', 'w', at(T0));
      await store().enqueueRun({ key: 'payment:pay_b:overpaid', kind: 'fulfillment', data: {} }, at(T0));
      await store().claimRun('payment:pay_b:overpaid', { owner: 'w', leaseMs: MINUTE, now: at(T0) });
      await store().failRun('payment:pay_b:overpaid', 'w', { error: 'no stock', now: at(T0) });
      await store().enqueueRun({ key: 'payment:pay_d:paid', kind: 'fulfillment', data: {} }, at(T0));
      await store().claimRun('payment:pay_d:paid', { owner: 'w', leaseMs: MINUTE, now: at(T0) });

      const found = async (search: Parameters<Store['searchResources']>[0]) => (await store().searchResources(search)).map((row) => `${row.id} ${row.handler}`);
      expect(await found({})).toEqual(['pay_d running', 'inv_c none', 'pay_b failed', 'pay_a done']);
      expect(await found({ find: 'pay_a' })).toEqual(['pay_a done']);
      expect(await found({ find: 'A-1003' })).toEqual(['inv_c none']);
      // Made without the checkout helper: the service's referenceId is its order id.
      expect(await found({ find: 'B-1' })).toEqual(['pay_d running']);
      expect(await found({ find: 'BUYER@example.COM' })).toEqual(['pay_d running', 'pay_a done']);
      expect(await found({ find: 'evt_b' })).toEqual(['pay_b failed']);
      expect(await found({ find: 'A-1003', kind: 'payment' })).toEqual([]);
      expect(await found({ find: 'nothing' })).toEqual([]);
      expect(await found({ handler: 'failed' })).toEqual(['pay_b failed']);
      expect(await found({ handler: 'running' })).toEqual(['pay_d running']);
      expect(await found({ handler: 'done' })).toEqual(['pay_a done']);
      expect(await found({ handler: 'none' })).toEqual(['inv_c none']);
      expect(await found({ outcome: 'paid' })).toEqual(['pay_d running', 'pay_a done']);
      expect(await found({ since: iso(T0 + MINUTE), before: iso(T0 + 3 * MINUTE) })).toEqual(['inv_c none', 'pay_b failed']);
      expect(await found({ amountMin: '9.5', amountMax: '42.1' })).toEqual(['pay_b failed', 'pay_a done']);
      expect(await found({ amountMin: '100' })).toEqual(['inv_c none']);
      expect(await found({ kind: 'payment', limit: 1, offset: 1 })).toEqual(['pay_b failed']);
      const [listed] = await store().searchResources({ find: 'pay_a' });
      expect(listed).toMatchObject({ kind: 'payment', id: 'pay_a', orderId: 'A-1001', outcome: 'paid', snapshot: { amount: '42.10' } });
    });

    it('filters by amount exactly to the last of 18 decimals, beyond what a floating-point number holds', async () => {
      const amounts = { pay_round: '10.50', pay_above: '10.500000000000000001', pay_wei: '0.000000000000000001', pay_big: '99999999999999999999999999' };
      for (const [i, [id, amount]] of Object.entries(amounts).entries())
        await store().updateResource({ kind: 'payment', id, outcome: 'pending', snapshot: { amount, amountReceived: '0' } }, at(T0 + i));
      const found = async (amountMin: string | undefined, amountMax: string | undefined) =>
        (await store().searchResources({ ...(amountMin ? { amountMin } : {}), ...(amountMax ? { amountMax } : {}) })).map((row) => row.id);
      expect(await found('10.5', '10.5')).toEqual(['pay_round']);
      expect(await found('010.500', '10.50')).toEqual(['pay_round']);
      expect(await found('10.500000000000000001', '10.6')).toEqual(['pay_above']);
      expect(await found(undefined, '10.499999999999999999')).toEqual(['pay_wei']);
      expect(await found('0.0000000000000000011', '1')).toEqual([]);
      expect(await found('0', '0.000000000000000001')).toEqual(['pay_wei']);
      expect(await found('99999999999999999999999998', undefined)).toEqual(['pay_big']);
      expect(await found(undefined, '99999999999999999999999998')).toEqual(['pay_wei', 'pay_above', 'pay_round']);
    });

    it('finds a search term as given or without the spaces around it, so an order id that keeps spaces is found too', async () => {
      await store().updateResource({ kind: 'payment', id: 'pay_spaced', orderId: ' A-2001 ', outcome: 'pending', source: 'checkout' }, at(T0));
      await store().updateResource({ kind: 'payment', id: 'pay_plain', orderId: 'A-2002', outcome: 'pending', source: 'checkout' }, at(T0 + MINUTE));
      await store().insertEvent(sampleEvent('evt_plain', { resourceKind: 'payment', resourceId: 'pay_plain' }), at(T0));
      const found = async (find: string) => (await store().searchResources({ find })).map((row) => row.id);
      expect(await found(' A-2001 ')).toEqual(['pay_spaced']);
      expect(await found('A-2001')).toEqual([]);
      expect(await found(' A-2002\t')).toEqual(['pay_plain']);
      expect(await found(' pay_spaced ')).toEqual(['pay_spaced']);
      expect(await found('\nevt_plain ')).toEqual(['pay_plain']);
    });

    it("finds a partner platform's order by the tenant's own order id, in every onboarded tenant", async () => {
      for (const tenantId of ['shop-42', 'acme'])
        await store().putTenantMerchant(
          { tenantId, environment: 'test', idempotencyKey: `ck-merchant-${tenantId}`, requestHash: 'h', name: tenantId, email: 'o@example.com' },
          at(T0),
        );
      await store().putTenantMerchant(
        { tenantId: 'acme', environment: 'live', idempotencyKey: 'ck-merchant-acme-live', requestHash: 'h', name: 'acme', email: 'o@example.com' },
        at(T0),
      );
      await store().updateResource({ kind: 'payment', id: 'pay_shop', orderId: 'shop-42/1001', outcome: 'pending', source: 'checkout' }, at(T0));
      await store().updateResource({ kind: 'payment', id: 'pay_acme', orderId: 'acme/1001', outcome: 'pending', source: 'checkout' }, at(T0 + MINUTE));
      await store().updateResource({ kind: 'payment', id: 'pay_other', orderId: 'gone/1001', outcome: 'pending', source: 'checkout' }, at(T0 + 2 * MINUTE));
      await store().updateResource({ kind: 'payment', id: 'pay_1002', orderId: 'acme/1002', outcome: 'pending', source: 'checkout' }, at(T0 + 3 * MINUTE));
      const found = async (find: string) => (await store().searchResources({ find })).map((row) => row.id);
      expect(await found(' 1001 ')).toEqual(['pay_acme', 'pay_shop']);
      expect(await found('acme/1001')).toEqual(['pay_acme']);
      expect(await found('1002')).toEqual(['pay_1002']);
      expect(await found('100')).toEqual([]);
      expect(await found('shop-42')).toEqual([]);
    });

    it('pages dead letters newest first', async () => {
      for (let i = 0; i < 4; i++) await store().insertDeadLetter({ receivedAt: iso(T0 + i), reason: `r${i}`, body: '{', headers: {} }, at(T0 + i));
      expect((await store().listDeadLetters(2, 1)).map((letter) => letter.reason)).toEqual(['r2', 'r1']);
      expect((await store().listDeadLetters(2, 3)).map((letter) => letter.reason)).toEqual(['r0']);
    });

    it('keeps timelines per subject, newest first, paged, and forgets them with pruned events', async () => {
      await store().appendActivity({ subject: 'payment:p1', kind: 'news', data: { source: 'webhook', outcome: 'pending' } }, at(T0));
      await store().appendActivity({ subject: 'payment:p2', kind: 'news', data: {} }, at(T0 + 1));
      await store().appendActivity({ subject: 'payment:p1', kind: 'handler', data: { result: 'failed', error: 'no stock "x" <b>' } }, at(T0 + 2 * MINUTE));
      await store().appendActivity({ subject: 'payment:p1', kind: 'news', data: { nested: { list: [1, 'a'] } } }, at(T0 + 3 * MINUTE));
      expect(await store().listActivity({ subject: 'payment:p1' })).toEqual([
        { subject: 'payment:p1', kind: 'news', at: iso(T0 + 3 * MINUTE), data: { nested: { list: [1, 'a'] } } },
        { subject: 'payment:p1', kind: 'handler', at: iso(T0 + 2 * MINUTE), data: { result: 'failed', error: 'no stock "x" <b>' } },
        { subject: 'payment:p1', kind: 'news', at: iso(T0), data: { source: 'webhook', outcome: 'pending' } },
      ]);
      expect((await store().listActivity({ subject: 'payment:p1', limit: 1, offset: 1 })).map((entry) => entry.kind)).toEqual(['handler']);
      expect(await store().listActivity({ subject: 'nobody' })).toEqual([]);
      await store().prune({ now: at(T0 + 4 * MINUTE), eventsBefore: iso(T0 + MINUTE) });
      expect((await store().listActivity({ subject: 'payment:p1' })).map((entry) => entry.at)).toEqual([iso(T0 + 3 * MINUTE), iso(T0 + 2 * MINUTE)]);
      expect(await store().listActivity({ subject: 'payment:p2' })).toEqual([]);
    });

    it("summarizes events by type over the last hour and day, the backlog, failed runs, open resources and reconcile's finds", async () => {
      const now = T0 + 2 * 86_400_000;
      const events: Array<[string, string, number]> = [
        ['old', 'payment.paid', now - 25 * 3_600_000],
        ['day1', 'payment.paid', now - 5 * 3_600_000],
        ['day2', 'invoice.paid', now - 2 * 3_600_000],
        ['hour1', 'payment.paid', now - 30 * MINUTE],
        ['hour2', 'payment.created', now - MINUTE],
      ];
      for (const [id, type, ms] of events) await store().insertEvent(sampleEvent(id, { type, receivedAt: iso(ms) }), at(ms));
      // Dispatched: old and day1 done, day2 failed for good, hour1 running; hour2 pending.
      for (const id of ['old', 'day1', 'day2', 'hour1']) await store().claimRun(`event:${id}`, { owner: 'w', leaseMs: 60_000, now: at(now) });
      for (const id of ['old', 'day1']) await store().completeRun(`event:${id}`, 'w', at(now));
      await store().failRun('event:day2', 'w', { error: 'gave up', now: at(now) });
      for (const [i, key] of ['payment:a:paid', 'payment:b:paid', 'payment:c:paid', 'invoice:d:expired'].entries())
        await store().enqueueRun({ key, kind: 'fulfillment', data: {} }, at(now - i));
      await store().claimRun('payment:a:paid', { owner: 'w', leaseMs: 60_000, now: at(now) });
      await store().claimRun('payment:b:paid', { owner: 'w', leaseMs: 60_000, now: at(now) });
      await store().failRun('payment:b:paid', 'w', { error: 'no stock', now: at(now) });
      await store().claimRun('payment:c:paid', { owner: 'w', leaseMs: 60_000, now: at(now) });
      await store().completeRun('payment:c:paid', 'w', at(now));
      await store().updateResource({ kind: 'payment', id: 'a', source: 'checkout' }, at(now));
      await store().updateResource({ kind: 'payment', id: 'b', outcome: 'paid', source: 'reconcile', open: false }, at(now));
      await store().updateResource({ kind: 'invoice', id: 'd', outcome: 'expired', source: 'reconcile' }, at(now));
      await store().updateResource({ kind: 'invoice', id: 'e', outcome: 'paid', source: 'webhook', open: false }, at(now));
      await store().insertDeadLetter({ receivedAt: iso(now), reason: 'bad', body: '{', headers: {} }, at(now));

      expect(await store().summarize({ now: at(now) })).toEqual({
        eventsByType: [
          { type: 'invoice.paid', lastHour: 0, lastDay: 1 },
          { type: 'payment.created', lastHour: 1, lastDay: 1 },
          { type: 'payment.paid', lastHour: 1, lastDay: 2 },
        ],
        dispatch: { pending: 1, running: 1, failed: 1, oldestQueuedAt: iso(now - 30 * MINUTE) },
        fulfillment: { pending: 1, running: 1, failed: 1 },
        open: { payment: 1, invoice: 1 },
        learnedByReconcile: { payment: 1, invoice: 1 },
        deadLetters: 1,
      });
      // The window moves with the caller's clock, not the wall clock's.
      const later = await store().summarize({ now: at(now + 86_400_000) });
      expect(later.eventsByType).toEqual([]);
      expect(later.dispatch.oldestQueuedAt).toBe(iso(now - 30 * MINUTE));
    });

    it("counts the backlog's age from when a run was last due: an old event retried is a new wait, a retry due later not yet one", async () => {
      const now = T0 + 3 * 86_400_000;
      await store().insertEvent(sampleEvent('old', { receivedAt: iso(now - 2 * 86_400_000) }), at(now - 2 * 86_400_000));
      await store().claimRun('event:old', { owner: 'w', leaseMs: 60_000, now: at(now - 2 * 86_400_000) });
      await store().failRun('event:old', 'w', { error: 'gave up', now: at(now - 2 * 86_400_000) });
      expect((await store().summarize({ now: at(now) })).dispatch.oldestQueuedAt).toBeUndefined();
      expect(await store().retryRun('event:old', at(now))).toBe(true);
      expect((await store().summarize({ now: at(now + MINUTE) })).dispatch).toEqual({ pending: 1, running: 0, failed: 0, oldestQueuedAt: iso(now) });
      // Claimed and put back with a backoff: due in ten minutes, so nothing has waited beyond now.
      await store().claimRun('event:old', { owner: 'w', leaseMs: 60_000, now: at(now + MINUTE) });
      await store().failRun('event:old', 'w', { error: 'try later', retryAt: iso(now + 10 * MINUTE), now: at(now + MINUTE) });
      expect((await store().summarize({ now: at(now + 2 * MINUTE) })).dispatch.oldestQueuedAt).toBe(iso(now + 2 * MINUTE));
      expect((await store().summarize({ now: at(now + 15 * MINUTE) })).dispatch.oldestQueuedAt).toBe(iso(now + 10 * MINUTE));
    });

    it('summarizes an empty store', async () => {
      expect(await store().summarize({ now: at(T0) })).toEqual({
        eventsByType: [],
        dispatch: { pending: 0, running: 0, failed: 0, oldestQueuedAt: undefined },
        fulfillment: { pending: 0, running: 0, failed: 0 },
        open: { payment: 0, invoice: 0 },
        learnedByReconcile: { payment: 0, invoice: 0 },
        deadLetters: 0,
      });
    });
  });
}

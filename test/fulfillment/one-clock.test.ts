import { describe, expect, it } from 'vitest';
import { createCheckout } from '../../src/checkout/index.js';
import type { CheckoutClient } from '../../src/client/index.js';
import { ApiError } from '../../src/errors/index.js';
import { attachFulfillment, FulfillmentEngine } from '../../src/fulfillment/index.js';
import { reconcile } from '../../src/reconcile/index.js';
import type { Payment } from '../../src/schemas/index.js';
import { MemoryStore } from '../../src/store/index.js';
import { createReceiver } from '../../src/webhooks/index.js';
import { clockCheckedStore } from '../support/clock-checked-store.js';
import { FakeReader } from '../support/fake-reader.js';
import { samplePayment } from '../support/fixtures.js';
import { captureLogger, paymentEvent, SECRET, signed } from '../webhooks/helpers.js';

// Far from any wall clock this suite may run under (CI also runs it with the system clock moved).
describe.each([
  ['far back', '2001-02-03T04:05:06.000Z'],
  ['far ahead', '2099-10-11T12:13:14.000Z'],
])('one clock (%s)', (_label, start) => {
  it('engine, receiver, reconcile and checkout pass their one injected clock to every store call', async () => {
    let now = Date.parse(start);
    const clock = () => new Date(now);
    const { store, violations } = clockCheckedStore(new MemoryStore(), clock);
    const reader = new FakeReader();
    const iso = (offsetMs: number) => new Date(Date.parse(start) + offsetMs).toISOString();
    const payment = reader.put(
      samplePayment({ amountReceived: '25.00', status: 'PAID', createdAt: iso(-60_000), updatedAt: iso(-1000), expiresAt: iso(3_600_000) }),
    );
    let failing = true;
    const calls: string[] = [];
    const engine = new FulfillmentEngine({
      store,
      client: reader,
      clock,
      maxAttempts: 2,
      backoffMs: 1000,
      handlers: {
        paid: async (resource) => {
          calls.push(resource.id);
          if (failing) throw new Error('warehouse down');
        },
      },
    });
    const receiver = createReceiver({ store, secrets: SECRET, clock, logger: captureLogger(), retention: { payloadDays: 1, idDays: 7 } });
    attachFulfillment(receiver, engine);

    // A delivery signed at the clock's time is accepted, stored and dispatched on that clock.
    const delivery = signed(JSON.stringify({ ...paymentEvent(), data: payment }), { timestamp: Math.floor(now / 1000) });
    expect((await receiver.handle({ headers: delivery.headers, body: Buffer.from(delivery.body) })).status).toBe(200);
    await receiver.idle();
    expect(calls).toHaveLength(1);

    // The handler's retry is due on the engine's clock, then it fails for good.
    expect(await engine.runDue()).toMatchObject({ retrying: 0, failed: 0 });
    now += 1000;
    expect(await engine.runDue()).toMatchObject({ failed: 1 });
    // Put back by command: due at once on the engine's clock, whatever the wall clock says.
    failing = false;
    expect(await engine.retryFailed()).toBe(1);
    expect(await engine.runDue()).toMatchObject({ completed: 1 });
    expect(calls).toHaveLength(3);

    // An unparseable (but signed) delivery becomes a dead letter; pruning runs on the clock too.
    const garbage = signed('{"not": "an event"}', { timestamp: Math.floor(now / 1000) });
    expect((await receiver.handle({ headers: garbage.headers, body: Buffer.from(garbage.body) })).status).toBe(400);
    now += 8 * 86_400_000;
    await receiver.prune();

    // Reconcile takes its lock and polls on the engine's clock.
    const open = reader.put(samplePayment({ createdAt: iso(0), updatedAt: iso(0), expiresAt: iso(3_600_000) }));
    await store.updateResource({ kind: 'payment', id: open.id, source: 'checkout' }, clock());
    now += 3_600_000;
    const summary = await reconcile({ store, engine, olderThanMs: 0 });
    expect(summary).toMatchObject({ skipped: false, checked: 1 });

    // The checkout helper records attempts, refusals and resources on the clock it is given.
    let refuse = true;
    const created: Payment = samplePayment({ referenceId: 'o-1', createdAt: iso(0), updatedAt: iso(0), expiresAt: iso(90 * 86_400_000) });
    const client = {
      payments: {
        create: async () => {
          if (!refuse) return created;
          throw new ApiError({
            status: 422,
            code: 'token_not_available',
            message: 'no such token',
            operation: 'Create payment',
            method: 'POST',
            url: '/v1/payments',
          });
        },
      },
    } as unknown as CheckoutClient;
    await expect(createCheckout({ store, creator: { client }, clock }, { orderId: 'o-1', amount: '25.00', token: 'DOGE' })).rejects.toMatchObject({
      code: 'token_not_available',
    });
    refuse = false;
    expect((await createCheckout({ store, creator: { client }, clock }, { orderId: 'o-1', amount: '25.00' })).resourceId).toBe(created.id);

    expect(violations).toEqual([]);
  });
});

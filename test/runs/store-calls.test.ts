import { describe, expect, it } from 'vitest';
import { attachFulfillment, FulfillmentEngine } from '../../src/fulfillment/index.js';
import { MemoryStore, type Store } from '../../src/store/index.js';
import { sampleEvent } from '../../src/testing/index.js';
import { createReceiver } from '../../src/webhooks/index.js';
import { FakeReader } from '../support/fake-reader.js';
import { samplePayment } from '../support/fixtures.js';
import { captureLogger, SECRET, signedEvent, waitFor } from '../webhooks/helpers.js';

/** The store, with every call counted, and the order of run claims and completions. */
function countingStore(): { store: Store; calls: Map<string, number>; leases: string[] } {
  const calls = new Map<string, number>();
  const leases: string[] = [];
  const inner = new MemoryStore();
  const store = new Proxy(inner, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver) as unknown;
      if (typeof value !== 'function' || typeof name !== 'string') return value;
      return (...args: unknown[]) => {
        calls.set(name, (calls.get(name) ?? 0) + 1);
        if (name === 'claimRun' || name === 'completeRun') leases.push(`${name} ${String(args[0]).split(':')[0]}`);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { store, calls, leases };
}

describe('store calls of one paid delivery', () => {
  it('receive, dispatch, confirm, decide and fulfil a paid payment in few store calls, each lease held alone', async () => {
    const { store, calls, leases } = countingStore();
    const reader = new FakeReader();
    const logger = captureLogger();
    const fulfilled: string[] = [];
    const engine = new FulfillmentEngine({ store, client: reader, logger, handlers: { paid: async (payment) => void fulfilled.push(payment.id) } });
    const receiver = createReceiver({ store, secrets: SECRET, logger, retention: false });
    attachFulfillment(receiver, engine);
    const payment = reader.put(samplePayment({ amountReceived: '25.00', status: 'PAID' }));
    await receiver.start();
    calls.clear();
    leases.length = 0;

    const answer = await receiver.handle(signedEvent(sampleEvent('payment.paid', payment)));
    expect(answer.status).toBe(200);
    await waitFor(() => fulfilled.length === 1);
    await receiver.idle();
    const counted = Object.fromEntries(calls);
    const total = Object.values(counted).reduce((sum, n) => sum + n, 0);
    await receiver.stop();
    expect(await store.listRuns({ status: ['pending', 'running', 'failed'] })).toEqual([]);
    expect(fulfilled).toEqual([payment.id]);
    // The event's run is completed before the handler's run is claimed: never two leases at once.
    expect(leases).toEqual(['claimRun event', 'completeRun event', 'claimRun payment', 'completeRun payment']);
    // Store the event; read the queue; claim the event; is the payment already done; store the
    // outcome with its handler run and the close; complete; claim the handler's run; load the
    // payment as decided; complete.
    expect(counted).toEqual({ insertEvent: 1, listRuns: 1, claimRun: 2, getResource: 2, updateResource: 1, completeRun: 2 });
    expect(total).toBe(9);
  });
});

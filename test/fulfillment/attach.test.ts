import { describe, expect, it } from 'vitest';
import { sampleEventOf } from '../../src/devtools/index.js';
import { attachFulfillment, FulfillmentEngine, type EventSource } from '../../src/fulfillment/index.js';
import { isSampleEvent, type CheckoutEvent } from '../../src/schemas/index.js';
import { MemoryStore } from '../../src/store/index.js';
import { sampleEvent } from '../../src/testing/index.js';
import { FakeReader } from '../support/fake-reader.js';
import { samplePayment } from '../support/fixtures.js';
import { captureLogger } from '../webhooks/helpers.js';

/** An engine confirming through a FakeReader, fed by `attachFulfillment`; `deliver` hands it one event. */
function wired() {
  const store = new MemoryStore();
  const reader = new FakeReader();
  const logger = captureLogger();
  const calls: string[] = [];
  const engine = new FulfillmentEngine({ store, client: reader, logger, handlers: { paid: async (payment) => void calls.push(payment.id) } });
  let handler: Parameters<EventSource['onAny']>[0] | undefined;
  attachFulfillment({ onAny: (h) => ((handler = h), () => undefined) }, engine);
  const deliver = async (event: CheckoutEvent) => handler!(event, { storedAt: new Date().toISOString() });
  return { store, reader, logger, calls, deliver };
}

describe('attachFulfillment', () => {
  it('leaves a sample event (checkout-kit trigger without a sandbox) alone: no confirm read, no resource followed, no handler', async () => {
    const { store, reader, logger, calls, deliver } = wired();
    const event = sampleEventOf('payment.paid');
    expect(isSampleEvent(event)).toBe(true);
    await deliver(event);
    expect(reader.reads).toBe(0);
    expect(await store.listResources({})).toEqual([]);
    expect(calls).toEqual([]);
    expect(logger.lines).toContainEqual(
      expect.objectContaining({ level: 'info', msg: expect.stringContaining(`Event ${event.id} (payment.paid) is a sample`) }),
    );
  });

  it('confirms and fulfils a live event even when its id starts with sample_, and a test event with any other id', async () => {
    const { reader, calls, deliver } = wired();
    const live = reader.put(samplePayment({ environment: 'live', amountReceived: '25.00', status: 'PAID' }));
    const test = reader.put(samplePayment({ amountReceived: '25.00', status: 'PAID' }));
    const liveEvent = { ...sampleEvent('payment.paid', live), id: 'sample_live' };
    expect(isSampleEvent(liveEvent)).toBe(false);
    await deliver(liveEvent);
    await deliver(sampleEvent('payment.paid', test));
    expect(reader.reads).toBe(2);
    expect(calls).toEqual([live.id, test.id]);
  });
});

import { randomUUID } from 'node:crypto';
import { FulfillmentEngine, EngineObservers, type FulfillmentHandlers } from '../../src/fulfillment/index.js';
import type { Store, StoredEvent } from '../../src/store/index.js';
import { createTimelineRecorder } from '../../src/timeline/index.js';
import { silentLogger } from '../../src/log/index.js';
import { samplePayment } from '../support/fixtures.js';

/** The test's one clock: every store write and page of these tests reads it. */
export const T0 = Date.parse('2031-03-04T10:00:00.000Z');

/** An event body as the service would send it, with the buyer's e-mail inside. */
export function eventBody(id: string, type: string, data: Record<string, unknown>): string {
  return JSON.stringify({ id, type, createdAt: new Date(T0).toISOString(), environment: 'test', data });
}

export function storedEvent(overrides: Partial<StoredEvent> & { id: string }): StoredEvent {
  return {
    type: 'payment.paid',
    environment: 'test',
    createdAt: new Date(T0).toISOString(),
    receivedAt: new Date(T0).toISOString(),
    resourceKind: 'payment',
    resourceId: undefined,
    body: '{}',
    ...overrides,
  };
}

/**
 * An engine that trusts event data (no service), on a settable clock, recording timelines like
 * `serve` does. `maxAttempts: 1`: a throwing handler fails for good at once.
 */
export function testEngine(store: Store, handlers: FulfillmentHandlers) {
  let now = T0;
  const clock = () => new Date(now);
  const observers = new EngineObservers();
  const timeline = createTimelineRecorder({ store, logger: silentLogger });
  observers.add(timeline);
  const engine = new FulfillmentEngine({ store, handlers, confirm: false, maxAttempts: 1, clock, observer: observers, logger: silentLogger });
  return { engine, clock, observers, timeline, advance: (ms: number) => void (now += ms), setNow: (ms: number) => void (now = ms) };
}

/** A paid payment brought by a webhook: its event stored and processed by the engine. */
export async function paidPayment(
  store: Store,
  engine: FulfillmentEngine,
  clock: () => Date,
  options: { email?: string; amount?: string; received?: string } = {},
) {
  const payment = samplePayment({
    id: randomUUID(),
    amount: options.amount ?? '25.00',
    amountReceived: options.received ?? options.amount ?? '25.00',
    status: 'PAID',
    email: options.email ?? 'buyer@example.com',
    createdAt: new Date(T0 - 60_000).toISOString(),
    updatedAt: clock().toISOString(),
    expiresAt: new Date(T0 + 3_600_000).toISOString(),
  });
  const eventId = `evt_${randomUUID()}`;
  await store.insertEvent(
    storedEvent({ id: eventId, resourceId: payment.id, receivedAt: clock().toISOString(), body: eventBody(eventId, 'payment.paid', payment) }),
    clock(),
  );
  const result = await engine.process({ kind: 'payment', id: payment.id, source: 'webhook', hint: payment });
  return { payment, eventId, result };
}

import { isSampleEvent, resourceKindOf, type CheckoutEvent } from '../schemas/index.js';
import type { Task } from '../runs/index.js';
import type { FulfillmentEngine } from './engine.js';

/** Anything with `onAny`, like the webhook receiver; with `runTask`, its run loop runs the handler runs too. */
export interface EventSource {
  /** Called with every stored event; returns a function that stops. */
  onAny(
    handler: (event: CheckoutEvent, delivery: { storedAt: string; signal?: AbortSignal; runNext?: (key: string) => void } | undefined) => unknown,
  ): () => void;
  /** Run the engine's handler runs on the source's run loop. */
  runTask?(kind: 'fulfillment', task: Task): void;
}

/**
 * Feed every `payment.*` / `invoice.*` event into the engine as a hint (source `webhook`). The
 * engine confirms with the service and decides; event names alone never fulfil anything. Errors
 * reading the service make the event's dispatch fail, so the receiver retries it.
 *
 * The receiver's one run loop then runs the engine's handler runs too: the handler run an event
 * queues runs right after the event's own run is stored, under its own lease, and due handler
 * runs (retries, a crashed worker's) are picked up by the same loop's poll.
 *
 * A sample event (`isSampleEvent`: `checkout-kit trigger` with no sandbox) names a resource the
 * service has never heard of: it stays stored and acknowledged, its dispatch completes, and the
 * engine never sees it (no confirm read that would fail for good, no resource left open).
 */
export function attachFulfillment(source: EventSource, engine: FulfillmentEngine): () => void {
  source.runTask?.('fulfillment', engine.task);
  return source.onAny(async (event, delivery) => {
    const kind = resourceKindOf(event.type);
    const id = (event.data as { id?: unknown } | undefined)?.id;
    if (!kind || typeof id !== 'string') return;
    if (isSampleEvent(event)) {
      engine.logger.info(
        { eventId: event.id, type: event.type },
        `Event ${event.id} (${event.type}) is a sample: stored and acknowledged; no confirm read, no handler.`,
      );
      return;
    }
    const merchantId = (event.data as { merchantId?: unknown }).merchantId;
    await engine.process({
      kind,
      id,
      source: 'webhook',
      hint: event.data,
      merchantId: typeof merchantId === 'string' ? merchantId : undefined,
      storedAt: delivery?.storedAt,
      signal: delivery?.signal,
      runNext: delivery?.runNext,
    });
  });
}

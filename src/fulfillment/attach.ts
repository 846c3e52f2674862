import { resourceKindOf, type CheckoutEvent } from '../schemas/index.js';
import type { FulfillmentEngine } from './engine.js';

/** Anything with `onAny`, like the webhook receiver. */
export interface EventSource {
  onAny(handler: (event: CheckoutEvent, delivery: { storedAt: string; signal?: AbortSignal } | undefined) => unknown): () => void;
}

/**
 * Feed every `payment.*` / `invoice.*` event into the engine as a hint (source `webhook`). The
 * engine confirms with the service and decides; event names alone never fulfil anything. Errors
 * reading the service make the event's dispatch fail, so the receiver retries it.
 */
export function attachFulfillment(source: EventSource, engine: FulfillmentEngine): () => void {
  return source.onAny(async (event, delivery) => {
    const kind = resourceKindOf(event.type);
    const id = (event.data as { id?: unknown } | undefined)?.id;
    if (!kind || typeof id !== 'string') return;
    await engine.process({ kind, id, source: 'webhook', hint: event.data, storedAt: delivery?.storedAt, signal: delivery?.signal });
  });
}

import type { Environment } from '../../schemas/common.js';
import { resourceKindOf, type CheckoutEvent } from '../../schemas/event.js';
import type { StoredEvent } from '../../store/types.js';

/** The event's environment: the envelope's, else its resource's. */
export function eventEnvironment(event: CheckoutEvent): Environment | undefined {
  if (event.environment) return event.environment;
  const data = event.data as { environment?: unknown } | null;
  const inner = typeof data === 'object' && data !== null ? data.environment : undefined;
  return inner === 'test' || inner === 'live' ? inner : undefined;
}

/** The record `store.insertEvent` takes. `body` is the raw body, byte for byte. */
export function toStoredEvent(event: CheckoutEvent, body: string, receivedAt: Date): StoredEvent {
  const data = event.data as { id?: unknown } | null;
  const resourceId = typeof data === 'object' && data !== null && typeof data.id === 'string' ? data.id : undefined;
  return {
    id: event.id,
    type: event.type,
    environment: eventEnvironment(event),
    createdAt: event.createdAt,
    receivedAt: receivedAt.toISOString(),
    resourceKind: resourceKindOf(event.type),
    resourceId,
    body,
  };
}

import type { Store, StoredEvent } from '../store/types.js';

/**
 * Which stored events to pick: by id (in the order given), or by type and/or receive time.
 * `{}` picks every stored event.
 * @example { ids: ['evt_1'] }
 * @example { type: 'payment.paid', since: '2025-01-01T00:00:00.000Z' }
 */
export type EventSelection = { ids: readonly string[] } | { type?: string | undefined; since?: string | undefined };

export interface SelectedEvents {
  /** Oldest first, so a replay repeats the original order. */
  events: StoredEvent[];
  /** Ids asked for that the store does not hold. */
  missing: string[];
}

/** The stored events a selection names. */
export async function selectEvents(store: Store, selection: EventSelection): Promise<SelectedEvents> {
  if ('ids' in selection) {
    const found = await Promise.all(selection.ids.map(async (id) => ({ id, event: await store.getEvent(id) })));
    return {
      events: found.flatMap(({ event }) => (event ? [event] : [])),
      missing: found.filter(({ event }) => !event).map(({ id }) => id),
    };
  }
  const newestFirst = await store.listEvents({ type: selection.type, since: selection.since, limit: Number.MAX_SAFE_INTEGER });
  return { events: newestFirst.reverse().map(({ run: _run, ...event }) => event), missing: [] };
}

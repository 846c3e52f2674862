import { ConfigError } from '../../errors/index.js';

/** A numeric option checked up front, so a bad value fails at start-up, not mid-delivery. */
export function positive(name: string, value: number, minimum = 1): number {
  if (!Number.isFinite(value) || value < minimum) throw new ConfigError(`Receiver option ${name} must be a number ≥ ${minimum}, got ${value}.`);
  return value;
}

/**
 * The store a receiver writes each event to, checked up front: without one, every delivery would
 * be answered 503 and sent again for ever.
 */
export function requireEventSink<T>(store: T, receiver: string): T {
  const sink = store as { insertEvent?: unknown; insertDeadLetter?: unknown } | null | undefined;
  if (typeof sink?.insertEvent !== 'function' || typeof sink.insertDeadLetter !== 'function') {
    throw new ConfigError(
      `${receiver} needs a store to keep each event in: pass { store: await openStore(…) }, or on a runtime without Node one with insertEvent and insertDeadLetter; got ${store === undefined ? 'none' : 'a value without them'}.`,
    );
  }
  return store;
}

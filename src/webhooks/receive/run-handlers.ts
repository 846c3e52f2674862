/** What a handler learns beside the event: when this receiver stored it, and whether it is stopping. */
export interface DeliveryInfo {
  /** When the event was stored (ISO, the receiver's clock). The fulfillment engine coalesces reads by it. */
  storedAt: string;
  /**
   * Aborted once the receiver stops (`serve` got SIGTERM). A handler waiting on something slow
   * (the engine's confirm read waiting out a `Retry-After`) may give up then, by throwing the
   * signal's reason (or an `AbortError`): when every failing handler of the event did so, the
   * failure is not recorded and the event is dispatched again at the next start. Always set by
   * the receiver; optional so that tests may call a handler without it.
   */
  signal?: AbortSignal;
  /**
   * Run this queued run (by its key) right after the event's own run is stored, in the same
   * worker slot and under its own lease: how `attachFulfillment` has the engine's handler run
   * follow the event that brought the news, without holding the event's lease meanwhile.
   */
  runNext?: (key: string) => void;
}

/** Make every call concurrently; resolves with what the failing ones threw. */
export async function runHandlers(calls: ReadonlyArray<() => unknown>): Promise<unknown[]> {
  // `async` wrapper: a handler that throws synchronously is caught like one that rejects.
  const results = await Promise.allSettled(calls.map(async (call) => call()));
  const errors: unknown[] = [];
  for (const result of results) if (result.status === 'rejected') errors.push(result.reason);
  return errors;
}

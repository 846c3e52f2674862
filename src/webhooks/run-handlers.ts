import type { CheckoutEvent } from '../schemas/event.js';

/** Run every handler on the event concurrently; resolves with what the failing ones threw. */
export async function runHandlers(handlers: ReadonlyArray<(event: CheckoutEvent) => unknown>, event: CheckoutEvent): Promise<unknown[]> {
  // `async` wrapper: a handler that throws synchronously is caught like one that rejects.
  const results = await Promise.allSettled(handlers.map(async (handler) => handler(event)));
  const errors: unknown[] = [];
  for (const result of results) if (result.status === 'rejected') errors.push(result.reason);
  return errors;
}

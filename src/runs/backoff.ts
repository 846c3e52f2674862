/**
 * Exponential backoff: `baseMs`, 2×, 4×, … after attempts 1, 2, 3, …, never above `maxMs`. The one
 * retry delay of the event task, the fulfillment engine and the sandbox's webhook sender.
 */
export function backoffDelay(attempt: number, baseMs: number, maxMs = Number.POSITIVE_INFINITY): number {
  // The exponent capped: a run retried for as long as the service is down may count past 1,024 attempts, where 2 ** n is Infinity (and 0 × Infinity NaN).
  return Math.min(maxMs, baseMs * 2 ** Math.min(52, Math.max(0, attempt - 1)));
}

/**
 * Exponential backoff: `baseMs`, 2×, 4×, … after attempts 1, 2, 3, …, never above `maxMs`. The one
 * retry delay of the event task, the fulfillment engine and the sandbox's webhook sender.
 */
export function backoffDelay(attempt: number, baseMs: number, maxMs = Number.POSITIVE_INFINITY): number {
  return Math.min(maxMs, baseMs * 2 ** Math.max(0, attempt - 1));
}

/** Exponential backoff: `baseMs`, 2×, 4×, … after attempts 1, 2, 3, …, never above `maxMs`. */
export function backoffDelay(attempt: number, baseMs: number, maxMs: number): number {
  return Math.min(maxMs, baseMs * 2 ** Math.max(0, attempt - 1));
}

/**
 * Whether `error` is `signal` having aborted (the receiver or the server stopping), not a failure
 * of its own: the signal's reason itself, or an `AbortError` made from it (an HTTP request cut
 * short), thrown after the signal aborted. What stopping leaves is not recorded as a failure.
 */
export function isAbortedBy(error: unknown, signal: AbortSignal | undefined): boolean {
  if (!signal?.aborted) return false;
  return error === signal.reason || (error instanceof Error && error.name === 'AbortError');
}

/**
 * A signal aborted by `caller`'s or after `timeoutMs` (with a `TimeoutError` reason), whichever
 * comes first; `release()` clears the timer and takes the listener off `caller` (which may live as
 * long as the process: a receiver's stop, a server's close). A plain timer, not `AbortSignal.timeout`
 * combined with the caller's: that pair cost every confirm read ~25 µs of the event loop (and left
 * the timeout signal to the GC), which a burst's dispatch takes from acknowledging deliveries.
 */
export function deadline(timeoutMs: number, caller: AbortSignal | undefined): { signal: AbortSignal; timedOut(): boolean; release(): void } {
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort(new DOMException(`no answer within ${timeoutMs} ms`, 'TimeoutError'));
  }, timeoutMs);
  const fromCaller = () => controller.abort(caller!.reason);
  if (caller?.aborted) fromCaller();
  else caller?.addEventListener('abort', fromCaller, { once: true });
  return {
    signal: controller.signal,
    timedOut: () => timedOut,
    release: () => {
      clearTimeout(timer);
      caller?.removeEventListener('abort', fromCaller);
    },
  };
}

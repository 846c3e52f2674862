/**
 * Run `task` every `ms` in the background: never two runs at once (a slow run makes the next tick
 * skip), errors go to `onError`, and the timer does not keep the process alive. `wrap` sees each
 * run's promise (e.g. to track in-flight work). Returns a function that stops it.
 */
export function every(
  ms: number,
  task: () => Promise<unknown>,
  onError: (error: unknown) => void,
  wrap: (run: Promise<void>) => unknown = () => undefined,
): () => void {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    wrap(
      task()
        .then(() => undefined, onError)
        .finally(() => (running = false)),
    );
  }, ms);
  timer.unref();
  return () => clearInterval(timer);
}

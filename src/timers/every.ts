/**
 * Run `task` every `ms` in the background: never two runs at once (a slow run makes the next tick
 * skip), errors go to `onError`, and the timer does not keep the process alive. `wrap` sees each
 * run's promise (e.g. to track in-flight work). Returns a function that stops it and resolves once
 * the run in progress, if any, has finished: whoever closes what the task uses (a store) must
 * wait for it, or a handler that returns into a closed store is called again later.
 */
export function every(
  ms: number,
  task: () => Promise<unknown>,
  onError: (error: unknown) => void,
  wrap: (run: Promise<void>) => unknown = () => undefined,
): () => Promise<void> {
  let running: Promise<void> | undefined;
  const timer = setInterval(() => {
    if (running) return;
    const run = task()
      .then(() => undefined, onError)
      .finally(() => (running = undefined));
    running = run;
    wrap(run);
  }, ms);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}

// For the scripts that run `npm test`'s steps as child processes one after another
// (run-stages.mjs, node-lines.mjs): Ctrl-C or a SIGTERM reaches the step running now, and the
// script learns that it was interrupted, to run nothing more.

/** Pass SIGINT and SIGTERM on to `steps.current`; `steps.interrupted` is the signal once one came. */
export function forwardSignals() {
  const steps = { current: undefined, interrupted: undefined };
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.on(signal, () => {
      steps.interrupted = signal;
      steps.current?.kill(signal);
    });
  }
  return steps;
}

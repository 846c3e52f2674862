/** What waits for work that may never settle: each gives up when the event loop empties. */
const waiting = new Set<() => void>();

function giveUpAll(): void {
  for (const giveUp of [...waiting]) giveUp();
}

/**
 * `work`, or `stuck()`'s error once nothing else is left to run while `work` is still pending. A
 * promise nothing can settle (one nobody resolves, a callback never called) leaves the event loop
 * empty, and Node then exits 0 without a word, as if the command had succeeded. Where something
 * keeps the process alive (a listening server), this only waits for `work`. Work that waits only on
 * an unref'd handle is taken for stuck too, though that handle may still fire while the process lingers.
 */
export async function unlessStuck<T>(work: Promise<T>, stuck: () => Error): Promise<T> {
  let giveUp!: () => void;
  const gaveUp = new Promise<never>((_resolve, reject) => {
    giveUp = () => reject(stuck());
  });
  // One listener for every waiter, so that many at once do not trip Node's listener-leak warning.
  if (waiting.size === 0) process.on('beforeExit', giveUpAll);
  waiting.add(giveUp);
  try {
    return await Promise.race([work, gaveUp]);
  } finally {
    waiting.delete(giveUp);
    if (waiting.size === 0) process.off('beforeExit', giveUpAll);
  }
}

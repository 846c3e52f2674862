/**
 * One confirm read per resource for all the news that arrives while a read of it is queued or in
 * flight. A caller joins the read that is queued (not started yet); while one is in flight, the
 * next caller queues a new one that starts after it: news must be confirmed by a read that began
 * after the news was stored, never by an answer the service gave before.
 *
 * Only the read is shared: each caller stores what it learned and runs its own handler claim, so
 * a slow handler never holds up the next news of its resource.
 *
 * A read may be given up (`signal`: the receiver stopping): callers share a read only when they
 * came with the same signal, or none, so that one path's stop never fails another's read (a
 * buyer's return) nor waits for a read it cannot abort; a read waiting for the one in flight before
 * it gives up as its signal aborts.
 */
export class ReadCoalescer<R> {
  private readonly queued = new Map<string, { task: Promise<{ value: R; startedAt: number }>; signal: AbortSignal | undefined }>();
  private readonly running = new Map<string, Promise<unknown>>();
  /** When (ms) the latest read of each resource whose answer was stored began; the oldest are forgotten past `capacity`. */
  private readonly confirmed = new Map<string, number>();

  constructor(private readonly capacity: number) {}

  /** Whether a read that began at or after `since` (ms) has already confirmed the resource. */
  confirmedSince(key: string, since: number): boolean {
    const at = this.confirmed.get(key);
    return at !== undefined && at >= since;
  }

  /**
   * Read `key` once it is its turn, or join the read already waiting with the same `signal`;
   * resolves with the answer and when the read began, or rejects with the signal's reason once it aborts.
   */
  read(key: string, now: () => number, read: () => Promise<R>, signal?: AbortSignal): Promise<{ value: R; startedAt: number }> {
    const waiting = this.queued.get(key);
    if (waiting && waiting.signal === signal) return waiting.task;
    const previous = this.running.get(key);
    // Assigned before the function below passes its first await (declared apart so that it may name it).
    let task!: Promise<{ value: R; startedAt: number }>;
    // eslint-disable-next-line prefer-const
    task = (async () => {
      // Always yields first, so that `task` is in `queued` before it leaves it.
      await settledOrAborted(previous, signal);
      if (this.queued.get(key)?.task === task) this.queued.delete(key);
      signal?.throwIfAborted();
      const startedAt = now();
      const reading = read();
      this.running.set(key, reading);
      try {
        return { value: await reading, startedAt };
      } finally {
        if (this.running.get(key) === reading) this.running.delete(key);
      }
    })();
    this.queued.set(key, { task, signal });
    return task;
  }

  /** The answer of a read that began at `startedAt` is stored: news stored before then needs no read. */
  stored(key: string, startedAt: number): void {
    if (startedAt < (this.confirmed.get(key) ?? -Infinity)) return;
    this.confirmed.delete(key);
    this.confirmed.set(key, startedAt);
    if (this.confirmed.size > this.capacity) this.confirmed.delete(this.confirmed.keys().next().value as string);
  }
}

/** Resolves once `previous` settles or `signal` aborts, whichever comes first; leaves no listener on the signal. */
function settledOrAborted(previous: Promise<unknown> | undefined, signal: AbortSignal | undefined): Promise<void> {
  if (signal?.aborted || !previous) return Promise.resolve();
  if (!signal) return previous.then(ignore, ignore);
  return new Promise<void>((resolve) => {
    const done = () => {
      signal.removeEventListener('abort', done);
      resolve();
    };
    signal.addEventListener('abort', done, { once: true });
    previous.then(done, done);
  });
}

const ignore = () => undefined;

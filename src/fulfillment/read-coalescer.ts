/**
 * One confirm read per resource for all the news that arrives while a read of it is queued or in
 * flight. A caller joins the read that is queued (not started yet); while one is in flight, the
 * next caller queues a new one that starts after it: news must be confirmed by a read that began
 * after the news was stored, never by an answer the service gave before.
 */
export class ReadCoalescer<R> {
  private readonly queued = new Map<string, Promise<R>>();
  private readonly running = new Map<string, Promise<R>>();
  /** When (ms) the latest successful read of each resource began; the oldest are forgotten past `capacity`. */
  private readonly confirmed = new Map<string, number>();

  constructor(private readonly capacity: number) {}

  /** Whether a read that began at or after `since` (ms) has already confirmed the resource. */
  confirmedSince(key: string, since: number): boolean {
    const at = this.confirmed.get(key);
    return at !== undefined && at >= since;
  }

  /** Run `read` for `key` once it is this key's turn, or join the one already waiting. */
  run(key: string, now: () => number, read: () => Promise<R>): Promise<R> {
    const waiting = this.queued.get(key);
    if (waiting) return waiting;
    const previous = this.running.get(key);
    // Assigned before the function below passes its first await.
    let task!: Promise<R>;
    task = (async () => {
      // Always yields first, so that `task` is in `queued` before it leaves it.
      await previous?.catch(() => undefined);
      if (this.queued.get(key) === task) this.queued.delete(key);
      const startedAt = now();
      const reading = read();
      this.running.set(key, reading);
      try {
        const result = await reading;
        this.remember(key, startedAt);
        return result;
      } finally {
        if (this.running.get(key) === reading) this.running.delete(key);
      }
    })();
    this.queued.set(key, task);
    return task;
  }

  private remember(key: string, startedAt: number): void {
    if (startedAt < (this.confirmed.get(key) ?? -Infinity)) return;
    this.confirmed.delete(key);
    this.confirmed.set(key, startedAt);
    if (this.confirmed.size > this.capacity) this.confirmed.delete(this.confirmed.keys().next().value as string);
  }
}

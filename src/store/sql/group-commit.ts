/**
 * Group commit: writes that arrive while `lanes` statements are already in flight wait, and the
 * next free lane writes all of them (up to `maxBatch`) in one statement, one transaction. Alone, a
 * write goes at once, as a batch of one: nothing waits for company. Under load a burst of
 * deliveries costs a few statements and commits instead of one each: PostgreSQL's round trips,
 * SQLite's per-statement work on the event loop.
 *
 * Every promise settles after the statement that carried its item has committed (or failed). A
 * failed batch is retried item by item, so one bad item fails alone.
 */
export class GroupCommit<T, R> {
  /** Items waiting for a lane, each with its caller's promise. */
  private readonly queue: Array<{ item: T; resolve(result: R): void; reject(error: unknown): void }> = [];
  private busy = 0;

  constructor(
    /** Write a batch in one statement; results in the order of `items`. */
    private readonly write: (items: T[]) => Promise<R[]>,
    private readonly lanes: number,
    private readonly maxBatch: number,
  ) {}

  push(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (this.busy < this.lanes) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.busy += 1;
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, this.maxBatch);
        try {
          const results = await this.write(batch.map((waiting) => waiting.item));
          batch.forEach((waiting, i) => waiting.resolve(results[i] as R));
        } catch (error) {
          if (batch.length === 1) batch[0]!.reject(error);
          else await Promise.all(batch.map((waiting) => this.write([waiting.item]).then(([result]) => waiting.resolve(result as R), waiting.reject)));
        }
      }
    } finally {
      this.busy -= 1;
    }
  }
}

import type { FileHandle } from 'node:fs/promises';
import { openExisting } from './files.js';

interface Reader {
  handle: Promise<FileHandle | undefined>;
  /** Reads using the handle now. */
  users: number;
  /** No longer kept: closed once its last read is done. */
  dropped: boolean;
}

/**
 * Read handles on journal segments, kept open between reads of event bodies: opening and closing a
 * segment for each read cost two more trips through the thread pool than the read itself, for
 * every event dispatch reads back. The newest `keep` segments are kept (nearly every body read
 * is in one of them); a handle no longer kept is closed once no read uses it. A segment deleted
 * after it was opened still reads as it was, and bodies never move within a segment, so what a
 * body reference points to is still there (the store forgets the handles of segments it deletes
 * itself, which would otherwise keep their disk space; those another process deletes are let go
 * as newer segments are read).
 */
export class SegmentReaders {
  private readonly readers = new Map<number, Reader>();

  constructor(
    private readonly pathOf: (segment: number) => string,
    private readonly keep = 2,
  ) {}

  /** Run `read` with a handle on `segment`, or with undefined when that segment file does not exist (pruned). */
  async with<T>(segment: number, read: (handle: FileHandle | undefined) => Promise<T>): Promise<T> {
    let reader = this.readers.get(segment);
    if (!reader) {
      reader = { handle: openExisting(this.pathOf(segment), 'r'), users: 0, dropped: false };
      this.readers.set(segment, reader);
      this.trim();
    }
    reader.users += 1;
    let handle: FileHandle | undefined;
    try {
      handle = await reader.handle;
      // Missing is not kept: a later read asks again.
      if (!handle) this.drop(segment, reader);
      return await read(handle);
    } catch (error) {
      // A handle that failed once is not trusted for the next read.
      this.drop(segment, reader);
      throw error;
    } finally {
      reader.users -= 1;
      if (reader.dropped && reader.users === 0) await this.close(reader);
    }
  }

  /** Close every handle (at once where no read uses it, else after its last read): the store reloaded or closed. */
  clear(): Promise<void> {
    return this.forget([...this.readers.keys()]);
  }

  /** Close the handles on these segments (deleted: an open handle would keep their disk space). */
  async forget(segments: Iterable<number>): Promise<void> {
    const idle: Reader[] = [];
    for (const segment of segments) {
      const reader = this.readers.get(segment);
      if (!reader) continue;
      this.drop(segment, reader);
      if (reader.users === 0) idle.push(reader);
    }
    await Promise.all(idle.map((reader) => this.close(reader)));
  }

  /** Keep the newest `keep` segments. */
  private trim(): void {
    if (this.readers.size <= this.keep) return;
    const oldest = [...this.readers.keys()].sort((a, b) => a - b).slice(0, this.readers.size - this.keep);
    for (const segment of oldest) {
      const reader = this.readers.get(segment) as Reader;
      this.drop(segment, reader);
      if (reader.users === 0) void this.close(reader);
    }
  }

  private drop(segment: number, reader: Reader): void {
    reader.dropped = true;
    if (this.readers.get(segment) === reader) this.readers.delete(segment);
  }

  private async close(reader: Reader): Promise<void> {
    const handle = await reader.handle.catch(() => undefined);
    await handle?.close().catch(() => undefined);
  }
}

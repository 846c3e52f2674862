import type { FileHandle } from 'node:fs/promises';
import { openExisting } from './files.js';

interface Reader {
  handle: Promise<FileHandle | undefined>;
  /** Reads using the handle now. */
  users: number;
  /** No longer kept: closed once its last read is done. */
  dropped: boolean;
  /** Set once closing began (a reader is closed once). */
  closing?: Promise<void>;
  /** Resolves once the reader is closed. */
  closed: Promise<void>;
  markClosed: () => void;
}

/**
 * Read handles on journal segments, kept open between reads of event bodies: opening and closing a
 * segment for each read cost two more trips through the thread pool than the read itself, for
 * every event dispatch reads back. One handle per segment serves every read of it at once; of the
 * handles no read uses, the `keep` used last are kept (dispatch reads from the newest segments).
 * A segment deleted after it was opened still reads as it was, and bodies never move within a
 * segment, so what a body reference points to is still there (the store forgets the handles of
 * segments it deletes itself, which would otherwise keep their disk space; those another process
 * deletes are let go as other segments are read).
 */
export class SegmentReaders {
  /** In order of last use, least recent first. */
  private readonly readers = new Map<number, Reader>();

  constructor(
    private readonly pathOf: (segment: number) => string,
    private readonly keep = 2,
  ) {}

  /** Run `read` with a handle on `segment`, or with undefined when that segment file does not exist (pruned). */
  async with<T>(segment: number, read: (handle: FileHandle | undefined) => Promise<T>): Promise<T> {
    let reader = this.readers.get(segment);
    if (reader) this.readers.delete(segment);
    else {
      let markClosed!: () => void;
      const closed = new Promise<void>((resolve) => (markClosed = resolve));
      reader = { handle: openExisting(this.pathOf(segment), 'r'), users: 0, dropped: false, closed, markClosed };
    }
    this.readers.set(segment, reader);
    reader.users += 1;
    try {
      const handle = await reader.handle;
      // Missing is not kept: a later read asks again.
      if (!handle) this.drop(segment, reader);
      return await read(handle);
    } catch (error) {
      // A handle that failed once is not trusted for the next read.
      this.drop(segment, reader);
      throw error;
    } finally {
      reader.users -= 1;
      if (reader.dropped) {
        if (reader.users === 0) await this.close(reader);
      } else this.trim();
    }
  }

  /** Close every handle, those in use once their reads are done: the store reloaded or closes. */
  clear(): Promise<void> {
    return this.forget([...this.readers.keys()]);
  }

  /** Close the handles on these segments (deleted: an open handle would keep their disk space), those in use once their reads are done. */
  async forget(segments: Iterable<number>): Promise<void> {
    const closing: Array<Promise<void>> = [];
    for (const segment of segments) {
      const reader = this.readers.get(segment);
      if (!reader) continue;
      this.drop(segment, reader);
      closing.push(reader.users === 0 ? this.close(reader) : reader.closed);
    }
    await Promise.all(closing);
  }

  /** Over `keep`: let go of the least recently used handles that no read uses. */
  private trim(): void {
    for (const [segment, reader] of this.readers) {
      if (this.readers.size <= this.keep) return;
      if (reader.users > 0) continue;
      this.drop(segment, reader);
      void this.close(reader);
    }
  }

  private drop(segment: number, reader: Reader): void {
    reader.dropped = true;
    if (this.readers.get(segment) === reader) this.readers.delete(segment);
  }

  private close(reader: Reader): Promise<void> {
    reader.closing ??= (async () => {
      const handle = await reader.handle.catch(() => undefined);
      await handle?.close().catch(() => undefined);
      reader.markClosed();
    })();
    return reader.closing;
  }
}

/**
 * Append-only UTF-8 storage for many short strings (event ids, resource ids) in fixed-size chunks:
 * a string kept here costs its bytes, not a V8 string object (~16 bytes of header, plus the
 * reference to it, each a thing the garbage collector walks). Chunks are never reallocated, so
 * growing leaves nothing behind to collect. Nothing is ever freed: a state that forgets strings
 * builds a new arena (see `EventTable.compacted`).
 *
 * Strings with a lone surrogate do not survive UTF-8: callers keep those themselves (`storable`).
 */
export class TextArena {
  private readonly chunks: Buffer[] = [];
  /** Bytes used of the last chunk. */
  private used = CHUNK;
  /** Where a probe is encoded to be compared with stored bytes, grown as needed. */
  private scratch = Buffer.alloc(256);

  /** Whether `text` reads back from UTF-8 as it is (no lone surrogate). */
  static storable(text: string): boolean {
    return !LONE_SURROGATE.test(text);
  }

  /** Keep `text` (`storable`); returns where it is: `pos` and its length in bytes. */
  write(text: string): { pos: number; len: number } {
    const len = Buffer.byteLength(text, 'utf8');
    // The empty string is nowhere: no chunk needs to exist for it (nor to read it back).
    if (len === 0) return { pos: 0, len: 0 };
    if (len > CHUNK - this.used) {
      this.chunks.push(Buffer.allocUnsafeSlow(Math.max(CHUNK, len)));
      this.used = 0;
    }
    const index = this.chunks.length - 1;
    const chunk = this.chunks[index] as Buffer;
    chunk.write(text, this.used, len, 'utf8');
    const pos = index * CHUNK + this.used;
    // A string larger than a chunk has a chunk of its own, which it fills.
    this.used = len > CHUNK ? CHUNK : this.used + len;
    return { pos, len };
  }

  read(pos: number, len: number): string {
    if (len === 0) return '';
    const offset = pos % CHUNK;
    return (this.chunks[Math.floor(pos / CHUNK)] as Buffer).toString('utf8', offset, offset + len);
  }

  /** Whether the bytes at `pos` are `text`, without making a string of them. */
  equals(pos: number, len: number, text: string): boolean {
    if (text.length > len || text.length * 3 < len) return false;
    if (this.scratch.length < text.length * 3) this.scratch = Buffer.alloc(text.length * 3);
    const written = this.scratch.write(text, 0, 'utf8');
    return written === len && this.bytesAre(pos, this.scratch, len);
  }

  /**
   * A test of whether stored bytes are `text`, which encodes `text` once: for scans that compare
   * one string with many (a listing filtered by resource id).
   */
  matcher(text: string): (pos: number, len: number) => boolean {
    const encoded = Buffer.from(text, 'utf8');
    return (pos, len) => len === encoded.length && this.bytesAre(pos, encoded, len);
  }

  private bytesAre(pos: number, bytes: Buffer, len: number): boolean {
    if (len === 0) return true;
    const offset = pos % CHUNK;
    return (this.chunks[Math.floor(pos / CHUNK)] as Buffer).compare(bytes, 0, len, offset, offset + len) === 0;
  }
}

const CHUNK = 256 * 1024;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

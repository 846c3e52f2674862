import { mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readRange } from '../../src/store/embedded/files.js';
import { SegmentReaders } from '../../src/store/embedded/segment-readers.js';
import { openDescriptors } from '../support/descriptors.js';

// Which files are held open is read from /proc: Linux only.
describe.runIf(process.platform === 'linux')('SegmentReaders', () => {
  let dir: string;
  let readers: SegmentReaders;
  const pathOf = (segment: number) => join(dir, `journal-${segment}.jsonl`);
  const held = async () => [...(await openDescriptors(dir)).keys()].sort();
  const text = (segment: number, from = 0, to = 5) => readers.with(segment, async (handle) => handle && (await readRange(handle, from, to)).toString());

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'segment-readers-'));
    readers = new SegmentReaders(pathOf);
    for (const segment of [1, 2, 3]) await writeFile(pathOf(segment), `seg-${segment}...`);
  });
  afterEach(async () => {
    await readers.clear();
    await rm(dir, { recursive: true, force: true });
  });

  it('keeps one handle per segment across reads, for the two segments used last', async () => {
    expect(await Promise.all([text(1), text(1), text(2)])).toEqual(['seg-1', 'seg-1', 'seg-2']);
    expect(await held()).toEqual(['journal-1.jsonl', 'journal-2.jsonl']);
    expect(await text(3)).toBe('seg-3');
    expect(await held()).toEqual(['journal-2.jsonl', 'journal-3.jsonl']);
    // The one let go is opened again when asked for.
    expect(await text(1, 0, 4)).toBe('seg-');
  });

  it('answers undefined for a missing segment without keeping that, and reads it once it exists', async () => {
    expect(await text(7)).toBeUndefined();
    await writeFile(pathOf(7), 'seg-7');
    expect(await text(7)).toBe('seg-7');
  });

  it('still reads a segment deleted after it was opened, and lets it go when told it was deleted', async () => {
    expect(await text(2)).toBe('seg-2');
    await unlink(pathOf(2));
    expect(await text(2)).toBe('seg-2');
    await readers.forget([2]);
    expect(await held()).toEqual([]);
    expect(await text(2)).toBeUndefined();
  });

  it('closes a handle only once the reads using it are done', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const slow = readers.with(1, async (handle) => {
      await gate;
      return (await readRange(handle!, 0, 5)).toString();
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    let cleared = false;
    const clearing = readers.clear().then(() => (cleared = true));
    await new Promise((resolve) => setTimeout(resolve, 20));
    // clear() (the store closing) waits for the read, which still has its file.
    expect(cleared).toBe(false);
    expect(await held()).toEqual(['journal-1.jsonl']);
    release();
    expect(await slow).toBe('seg-1');
    await clearing;
    expect(await held()).toEqual([]);
  });

  it('opens each segment once for many reads at once across more segments than it keeps, then keeps the two used last', async () => {
    for (const segment of [4, 5]) await writeFile(pathOf(segment), `seg-${segment}...`);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const opened = new Set<number>();
    // Interleaved, as a listing of events stored over several segments is.
    const reads = Array.from({ length: 60 }, (_, i) => 1 + (i % 5)).map((segment) =>
      readers.with(segment, async (handle) => {
        opened.add((handle as { fd: number }).fd);
        await gate;
        return (await readRange(handle!, 0, 5)).toString();
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await held()).toEqual([1, 2, 3, 4, 5].map((segment) => `journal-${segment}.jsonl`));
    release();
    expect(new Set(await Promise.all(reads))).toEqual(new Set([1, 2, 3, 4, 5].map((segment) => `seg-${segment}`)));
    expect(opened.size).toBe(5);
    expect(await held()).toEqual(['journal-4.jsonl', 'journal-5.jsonl']);
  });

  it('does not keep a handle whose read failed', async () => {
    await expect(readers.with(1, async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await held()).toEqual([]);
  });
});

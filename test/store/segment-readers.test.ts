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

  it('keeps one handle per segment across reads, for the newest two segments', async () => {
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
    await readers.clear();
    expect(await held()).toEqual(['journal-1.jsonl']);
    release();
    expect(await slow).toBe('seg-1');
    expect(await held()).toEqual([]);
  });

  it('does not keep a handle whose read failed', async () => {
    await expect(readers.with(1, async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await held()).toEqual([]);
  });
});

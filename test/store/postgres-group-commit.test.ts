import { describe, expect, it } from 'vitest';
import { GroupCommit } from '../../src/store/postgres/group-commit.js';

/** A writer that records its batches and answers when told to. */
function recordingWriter(fail: (item: number) => boolean = () => false) {
  const batches: number[][] = [];
  const pending: Array<() => void> = [];
  const write = (items: number[]) =>
    new Promise<number[]>((resolve, reject) => {
      batches.push(items);
      pending.push(() => (items.some(fail) ? reject(new Error(`bad item in ${items.join(',')}`)) : resolve(items.map((item) => item * 10))));
    });
  const flush = async () => {
    while (pending.length > 0) {
      pending.shift()!();
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  return { write, batches, flush };
}

describe('GroupCommit', () => {
  it('writes a lone item at once, as a batch of one', async () => {
    const writer = recordingWriter();
    const group = new GroupCommit(writer.write, 2, 100);
    const result = group.push(1);
    expect(writer.batches).toEqual([[1]]);
    await writer.flush();
    expect(await result).toBe(10);
  });

  it('gathers what arrives while every lane is busy into the next batch, up to maxBatch', async () => {
    const writer = recordingWriter();
    const group = new GroupCommit(writer.write, 2, 3);
    const results = [1, 2, 3, 4, 5, 6, 7].map((item) => group.push(item));
    expect(writer.batches).toEqual([[1], [2]]);
    await writer.flush();
    expect(writer.batches).toEqual([[1], [2], [3, 4, 5], [6, 7]]);
    expect(await Promise.all(results)).toEqual([10, 20, 30, 40, 50, 60, 70]);
  });

  it('retries a failed batch item by item, so only the bad item fails', async () => {
    const writer = recordingWriter((item) => item === 4);
    const group = new GroupCommit(writer.write, 1, 10);
    const results = Promise.allSettled([1, 2, 3, 4, 5].map((item) => group.push(item)));
    await writer.flush();
    expect(writer.batches).toEqual([[1], [2, 3, 4, 5], [2], [3], [4], [5]]);
    expect((await results).map((result) => (result.status === 'fulfilled' ? result.value : 'failed'))).toEqual([10, 20, 30, 'failed', 50]);
  });
});

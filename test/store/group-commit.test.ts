import { describe, expect, it } from 'vitest';
import { GroupCommit } from '../../src/store/sql/group-commit.js';

/** A write whose batches are recorded and held until `release()`: what the test sees in flight. */
function heldWriter(fails: (item: string) => boolean = () => false) {
  const batches: string[][] = [];
  const held: Array<() => void> = [];
  const write = (items: string[]) => {
    batches.push(items);
    return new Promise<string[]>((resolve, reject) => {
      held.push(() => (items.some(fails) ? reject(new Error(`refused ${items.join(',')}`)) : resolve(items.map((item) => `wrote ${item}`))));
    });
  };
  /** Let every batch in flight settle, then wait until the queue has moved on. */
  const release = async () => {
    for (const settle of held.splice(0)) settle();
    await new Promise((resolve) => setImmediate(resolve));
  };
  return { batches, write, release };
}

describe('GroupCommit', () => {
  it('writes a lone item at once, as a batch of one', async () => {
    const writer = heldWriter();
    const commit = new GroupCommit(writer.write, 1, 200);
    const result = commit.push('a');
    expect(writer.batches).toEqual([['a']]);
    await writer.release();
    await expect(result).resolves.toBe('wrote a');
  });

  it('writes what arrives while a batch is in flight together, in the next batch, each caller getting its own result', async () => {
    const writer = heldWriter();
    const commit = new GroupCommit(writer.write, 1, 200);
    const results = ['a', 'b', 'c', 'd'].map((item) => commit.push(item));
    expect(writer.batches).toEqual([['a']]);
    await writer.release();
    expect(writer.batches).toEqual([['a'], ['b', 'c', 'd']]);
    await writer.release();
    await expect(Promise.all(results)).resolves.toEqual(['wrote a', 'wrote b', 'wrote c', 'wrote d']);
  });

  it('keeps a batch within maxBatch', async () => {
    const writer = heldWriter();
    const commit = new GroupCommit(writer.write, 1, 2);
    const results = ['a', 'b', 'c', 'd', 'e'].map((item) => commit.push(item));
    for (let i = 0; i < 3; i++) await writer.release();
    expect(writer.batches).toEqual([['a'], ['b', 'c'], ['d', 'e']]);
    await expect(Promise.all(results)).resolves.toHaveLength(5);
  });

  it('runs up to `lanes` batches at once', () => {
    const writer = heldWriter();
    const commit = new GroupCommit(writer.write, 2, 200);
    for (const item of ['a', 'b', 'c']) void commit.push(item);
    expect(writer.batches).toEqual([['a'], ['b']]);
  });

  it('retries a failed batch item by item, so only the bad item fails', async () => {
    const writer = heldWriter((item) => item === 'bad');
    const commit = new GroupCommit(writer.write, 1, 200);
    const first = commit.push('a');
    const rest = ['b', 'bad', 'c'].map((item) => commit.push(item).then(String, (error: Error) => error.message));
    await writer.release();
    // The batch [b, bad, c] fails, then each is written alone.
    await writer.release();
    await writer.release();
    expect(writer.batches).toEqual([['a'], ['b', 'bad', 'c'], ['b'], ['bad'], ['c']]);
    await expect(first).resolves.toBe('wrote a');
    await expect(Promise.all(rest)).resolves.toEqual(['wrote b', 'refused bad', 'wrote c']);
  });
});

import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Low } from 'lowdb';
import { JSONFile } from 'lowdb/node';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { StoreError } from '../../src/errors/index.js';
import { SandboxState, STATE_FILE } from '../../src/sandbox/state.js';
import { cleanup, tempDir } from './helpers.js';

afterEach(cleanup);

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('SandboxState.commit', () => {
  it('resolves after the write that began after it, while commits keep coming (a steady stream does not starve it)', async () => {
    const dir = await tempDir();
    const state = await SandboxState.open(dir);
    let finalSeq: number;
    try {
      let firstDone = false;
      let streamDone = 0;
      let streamDoneWhenFirstDone = -1;
      state.data.seq += 1;
      const first = state.commit().then(() => {
        firstDone = true;
        streamDoneWhenFirstDone = streamDone;
      });
      // A commit every turn of the event loop, as deliveries are recorded under a storm, until
      // the first commit resolves or 20 of the stream's have.
      const stream: Array<Promise<void>> = [];
      while (!firstDone && streamDone < 20) {
        state.data.seq += 1;
        stream.push(state.commit().then(() => void (streamDone += 1)));
        await nextTurn();
      }
      await Promise.all([first, ...stream]);
      expect(streamDoneWhenFirstDone, 'commits made after the first finished before it').toBe(0);
      expect(stream.length).toBeGreaterThan(0);

      // Every change is in the file once every commit has resolved.
      const onDisk = JSON.parse(await readFile(join(dir, STATE_FILE), 'utf8')) as { seq: number };
      expect(onDisk.seq).toBe(state.data.seq);
      finalSeq = state.data.seq;
    } finally {
      await state.close();
    }
    const again = await SandboxState.open(dir);
    try {
      expect(again.data.seq).toBe(finalSeq);
    } finally {
      await again.close();
    }
  });
});

describe('SandboxState.commit when a write fails', () => {
  it('fails the commit whose write failed and every commit whose change the read-back undid; later ones are kept', async () => {
    const dir = await tempDir();
    const state = await SandboxState.open(dir);
    try {
      state.data.seq = 1;
      await state.commit();
      // The next write fails (as a full disk would make it) once the test lets it finish.
      let writeStarted!: () => void;
      const started = new Promise<void>((resolve) => (writeStarted = resolve));
      let failWrite!: () => void;
      const failed = new Promise<void>((resolve) => (failWrite = resolve));
      const write = vi.spyOn(Low.prototype, 'write').mockImplementationOnce(async () => {
        writeStarted();
        await failed;
        throw new Error('ENOSPC: no space left on device');
      });
      state.data.seq = 2;
      const failing = state.commit();
      await started;
      // Made while the failing write is under way: it goes into the next write.
      state.data.seq = 3;
      const undone = state.commit();
      failWrite();
      const [first, second] = await Promise.allSettled([failing, undone]);
      write.mockRestore();
      expect(first).toMatchObject({ status: 'rejected', reason: expect.any(StoreError) });
      expect((first as PromiseRejectedResult).reason.message).toContain('ENOSPC');
      expect(second).toMatchObject({ status: 'rejected', reason: expect.any(StoreError) });
      expect((second as PromiseRejectedResult).reason.message).toMatch(/undid this change\. Try again\./);
      // Memory is what the file holds again, and a change made now is kept.
      expect(state.data.seq).toBe(1);
      state.data.seq = 4;
      await state.commit();
      const onDisk = JSON.parse(await readFile(join(dir, STATE_FILE), 'utf8')) as { seq: number };
      expect(onDisk.seq).toBe(4);
    } finally {
      await state.close();
    }
  });
  const failNextWrite = () =>
    vi.spyOn(Low.prototype, 'write').mockImplementationOnce(async () => {
      throw new Error('ENOSPC: no space left on device');
    });

  it('a first write that fails (no file yet) leaves memory empty, as the file would read', async () => {
    const dir = await tempDir();
    const state = await SandboxState.open(dir);
    try {
      state.data.seq = 5;
      const write = failNextWrite();
      await expect(state.commit()).rejects.toThrow(/ENOSPC/);
      write.mockRestore();
      expect(state.data.seq).toBe(0);
      expect(state.data.payments).toEqual([]);
    } finally {
      await state.close();
    }
  });

  it('when the file cannot be read back either, writes nothing more: the rejected change never reaches the file', async () => {
    const dir = await tempDir();
    const state = await SandboxState.open(dir);
    state.data.seq = 1;
    await state.commit();
    state.data.seq = 2;
    const write = failNextWrite();
    const read = vi.spyOn(JSONFile.prototype, 'read').mockRejectedValueOnce(new Error('EIO: i/o error'));
    await expect(state.commit()).rejects.toThrow(/ENOSPC/);
    write.mockRestore();
    read.mockRestore();
    state.data.seq = 3;
    await expect(state.commit()).rejects.toThrow(/nor read it back \(EIO: i\/o error\).*Restart it\./);
    await state.close();
    const onDisk = JSON.parse(await readFile(join(dir, STATE_FILE), 'utf8')) as { seq: number };
    expect(onDisk.seq).toBe(1);
  });

  it('refuses a commit once close() has begun', async () => {
    const dir = await tempDir();
    const state = await SandboxState.open(dir);
    const closing = state.close();
    await expect(state.commit()).rejects.toThrow(/is closed: nothing more is written/);
    await closing;
  });
});

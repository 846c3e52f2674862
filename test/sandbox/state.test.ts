import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SandboxState, STATE_FILE } from '../../src/sandbox/state.js';
import { cleanup, tempDir } from './helpers.js';

afterEach(cleanup);

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('SandboxState.commit', () => {
  it('resolves after the write that began after it, while commits keep coming (a steady stream does not starve it)', async () => {
    const dir = await tempDir();
    const state = await SandboxState.open(dir);
    let finalSeq = 0;
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

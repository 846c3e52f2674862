import { dirname } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteStore, type Run, type StoredEvent } from '../../src/store/index.js';
import { execCli } from '../support/cli.js';
import { sampleBody, sampleEvent } from './fixtures/sample-event.js';
import type { WorkerArgs } from './fixtures/store-worker.js';
import { Scratch, type Worker } from './helpers.js';

// Several real processes on one SQLite store at once, as serve, a cron reconcile and the CLI share
// it on one host: SQLite arbitrates (one writer at a time; readers never wait for writers), and
// the store's inserts and claims are single guarded statements. Nothing here is retried by the
// test: a call that rejects (SQLITE_BUSY past the busy timeout, say) is counted as an error.

const scratch = new Scratch();
afterEach(() => scratch.cleanUp());

const PROCESSES = 4;

/** Open the store in `dir` in this process, run `work`, close it. */
async function withStore<T>(dir: string, work: (store: SqliteStore) => Promise<T>): Promise<T> {
  const store = new SqliteStore({ dir });
  await store.open();
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

/** How many times each item occurs across the lists. */
function occurrences(lists: string[][]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const item of lists.flat()) counts.set(item, (counts.get(item) ?? 0) + 1);
  return counts;
}

describe('several processes on one SQLite store at once', () => {
  it(`${PROCESSES} processes opening a new store together and inserting the same event ids: each id is inserted exactly once overall, and stored once with its dispatch run`, async () => {
    const dir = await scratch.dir();
    const ids = Array.from({ length: 1_000 }, (_, i) => `evt_shared_${i}`);
    // Every process inserts every id, half of them in the other order: they meet on each id.
    const results = await scratch.race(
      Array.from({ length: PROCESSES }, (_, p) => ({
        mode: 'race' as const,
        dir,
        owner: `p${p}`,
        eventIds: p % 2 === 0 ? ids : [...ids].reverse(),
        runKeys: [],
        complete: false,
        concurrency: 16,
      })),
    );

    expect(results.map((result) => result.errors)).toEqual(results.map(() => []));
    for (const result of results) expect([...result.inserted, ...result.duplicates].sort()).toEqual([...ids].sort());
    const inserted = occurrences(results.map((result) => result.inserted));
    expect(
      ids.filter((id) => inserted.get(id) !== 1),
      'ids not inserted exactly once',
    ).toEqual([]);

    await withStore(dir, async (store) => {
      const events = await store.listEvents({ limit: 100_000 });
      expect(events.map((event) => event.id).sort()).toEqual([...ids].sort());
      expect(events.filter((event) => event.body !== sampleBody(event.id)).map((event) => event.id)).toEqual([]);
      const runs = await store.listRuns({ kind: 'event', limit: 100_000 });
      expect(runs.map((run) => run.key).sort()).toEqual(ids.map((id) => `event:${id}`).sort());
    });
  });

  it(`${PROCESSES} processes racing to claim the same runs, then each completing all of them: each run is claimed by exactly one, and completed only by it`, async () => {
    const dir = await scratch.dir();
    const runKeys = Array.from({ length: 400 }, (_, i) => `shared:${i}`);
    await withStore(dir, async (store) => {
      for (const key of runKeys) await store.enqueueRun({ key, kind: 'fulfillment', data: {} });
    });
    // The same order everywhere: they contend for the same run at the same time.
    const results = await scratch.race(
      Array.from({ length: PROCESSES }, (_, p) => ({ mode: 'race' as const, dir, owner: `p${p}`, eventIds: [], runKeys, complete: true, concurrency: 16 })),
    );

    expect(results.map((result) => result.errors)).toEqual(results.map(() => []));
    const claimed = occurrences(results.map((result) => result.claimed));
    expect(
      runKeys.filter((key) => claimed.get(key) !== 1),
      'runs not claimed exactly once',
    ).toEqual([]);
    for (const result of results) expect([...result.completed].sort()).toEqual([...result.claimed].sort());
    // How the claims spread over the processes is the lock's fairness, not correctness: one process
    // taking every run in a few commits is as right as four sharing them. What must hold is above.

    await withStore(dir, async (store) => {
      const runs = await store.listRuns({ kind: 'fulfillment', limit: 100_000 });
      expect(runs).toHaveLength(runKeys.length);
      // A second claim would show as a second attempt.
      expect(runs.filter((run) => run.status !== 'done' || run.attempts !== 1).map((run) => `${run.key} ${run.status} ${run.attempts}`)).toEqual([]);
    });
  });

  it('checkout-kit events list, runs and store check in a loop beside writers: no reader fails or waits out a lock; then the writers are SIGKILLed and every insert that had resolved is there', async () => {
    const dir = await scratch.dir();
    // A store to start from, so the readers find one.
    await withStore(dir, (store) => store.insertEvent(sampleEvent('evt_first')));
    const writers: Worker[] = Array.from({ length: 3 }, () => scratch.worker({ mode: 'crash', dir, concurrency: 8 } satisfies WorkerArgs));
    const acked = writers.map(() => [] as string[]);
    // Each writer's acknowledged ids, as they come.
    const collecting = writers.map(async (worker, w) => {
      for (let line = await worker.lines.next(); !line.done; line = await worker.lines.next()) acked[w]!.push(line.value);
    });
    const ackedCount = () => acked.reduce((sum, list) => sum + list.length, 0);

    const env = { CHECKOUT_STORE: `file:${dir}`, LOG_LEVEL: 'warn' };
    const cwd = dirname(dir);
    const reads: Array<{ command: string; code: number | null; stderr: string; ackedBefore: number; ackedAfter: number }> = [];
    const commands = [
      ['events', 'list', '--json', '--limit', '20'],
      ['runs', '--json'],
      ['store', 'check', '--json'],
    ];
    // Until every command has run at least twice while the writers kept acknowledging.
    for (let i = 0; reads.filter((read) => read.ackedAfter > read.ackedBefore).length < 2 * commands.length; i++) {
      const args = commands[i % commands.length]!;
      const ackedBefore = ackedCount();
      const result = await execCli(args, { cwd, env });
      reads.push({ command: args.slice(0, 2).join(' '), code: result.code, stderr: result.stderr, ackedBefore, ackedAfter: ackedCount() });
      expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(0);
      const answer = JSON.parse(result.stdout) as StoredEvent[] | Run[] | { status: string };
      if (args[0] === 'store') expect(answer).toMatchObject({ status: 'healthy' });
      else expect((answer as unknown[]).length).toBeGreaterThan(0);
      expect(
        writers.every((worker) => worker.child.exitCode === null),
        'a writer stopped by itself',
      ).toBe(true);
    }
    expect(
      reads.filter((read) => read.stderr !== ''),
      'readers that printed anything on stderr',
    ).toEqual([]);

    for (const worker of writers) worker.child.kill('SIGKILL');
    await Promise.all(writers.map((worker) => worker.exited));
    await Promise.all(collecting);
    const ids = acked.flat();
    expect(acked.every((list) => list.length > 0)).toBe(true);
    await withStore(dir, async (store) => {
      const stored = new Set((await store.listEvents({ limit: 10_000_000 })).map((event) => event.id));
      expect(ids.filter((id) => !stored.has(id))).toEqual([]);
      expect(await store.insertEvent(sampleEvent('evt_after_kill'))).toEqual({ inserted: true });
    });
  });
});

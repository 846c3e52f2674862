import { constants } from 'node:fs';
import { appendFile, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { StoreError } from '../../src/errors/index.js';
import { EmbeddedStore, type EmbeddedStoreOptions } from '../../src/store/index.js';
import { openDescriptors } from '../support/descriptors.js';
import { storeContract } from './contract.js';
import type { RaceResult } from './fixtures/store-worker.js';
import { sampleBody, sampleEvent } from './fixtures/sample-event.js';
import { everything, filesOf, openEmbedded, recordingLogger, Scratch } from './helpers.js';

const scratch = new Scratch();
afterEach(() => scratch.cleanUp());

function embeddedFactory(options: Partial<EmbeddedStoreOptions> = {}) {
  return async () => {
    const dir = await scratch.dir();
    const store = await openEmbedded(dir, options);
    return { store, cleanup: () => store.close() };
  };
}

storeContract('EmbeddedStore', embeddedFactory());
// Compacting whenever the journal outgrows the snapshot puts bodies in many segments and makes
// every test go through snapshot round trips as well.
storeContract('EmbeddedStore, compacting after nearly every write', embeddedFactory({ compactMinBytes: 0, compactLullMs: 0 }));

/** Generations of the journal segments in `dir`, oldest first. */
const segments = async (dir: string) =>
  (await readdir(dir))
    .flatMap((name) => /^journal-(\d+)\.jsonl$/.exec(name)?.[1] ?? [])
    .map(Number)
    .sort((a, b) => a - b);

/** A store with something of every kind in it. */
async function fill(store: EmbeddedStore): Promise<void> {
  await Promise.all(Array.from({ length: 30 }, (_, i) => store.insertEvent(sampleEvent(`evt_${i}`))));
  await store.claimRun('event:evt_0', { owner: 'w', leaseMs: 60_000 });
  await store.completeRun('event:evt_0', 'w');
  await store.claimRun('event:evt_1', { owner: 'w', leaseMs: 60_000 });
  await store.failRun('event:evt_1', 'w', { error: 'boom', retryAt: new Date(Date.now() + 60_000).toISOString() });
  await store.updateResource({ kind: 'payment', id: 'pay_1', outcome: 'paid', snapshot: { id: 'pay_1', amount: '1.00' }, orderId: 'order_1' });
  await store.putCheckoutAttempt({ orderId: 'order_1', kind: 'payment', idempotencyKey: 'idem_1', requestHash: 'h' });
  await store.completeCheckoutAttempt('order_1', { resourceId: 'pay_1', checkoutUrl: 'https://pay.example/1' });
  await store.insertDeadLetter({ receivedAt: new Date().toISOString(), reason: 'bad JSON', body: '{"x":', headers: { a: 'b' } });
  await store.acquireLock('reconcile', 'a', 60_000);
}

describe('EmbeddedStore files', () => {
  it('keeps everything across close and reopen, also under NODE_ENV=test (no lowdb memory preset)', async () => {
    expect(process.env.NODE_ENV).toBe('test');
    const dir = await scratch.dir();
    const first = await openEmbedded(dir);
    await fill(first);
    const before = await everything(first);
    expect(before.events).toHaveLength(30);
    await first.close();

    const second = await openEmbedded(dir);
    expect(await everything(second)).toEqual(before);
    expect(await second.getCheckoutAttempt('order_1')).toMatchObject({ status: 'created', resourceId: 'pay_1' });
    expect(await second.acquireLock('reconcile', 'b', 60_000)).toBe(false);
    await second.compact();
    await second.close();

    const third = await openEmbedded(dir);
    expect(await everything(third)).toEqual(before);
    await third.close();
  });

  it('regression: a store holding lease renewals (a slow handler) opens for a second instance and after a restart', async () => {
    const dir = await scratch.dir();
    const writer = await openEmbedded(dir);
    const t0 = Date.parse('2030-01-01T00:00:00.000Z');
    await writer.enqueueRun({ key: 'payment:p:paid', kind: 'fulfillment', data: {} }, new Date(t0));
    await writer.claimRun('payment:p:paid', { owner: 'a', leaseMs: 30_000, now: new Date(t0) });
    const reader = await openEmbedded(dir);
    expect(await writer.renewLease('payment:p:paid', 'a', 30_000, new Date(t0 + 10_000))).toBe(true);
    expect(await readFile(join(dir, 'journal-0.jsonl'), 'utf8')).toContain('"t":"renew"');
    // The second instance catches up over the renew line; a restart replays it.
    expect(await reader.getRun('payment:p:paid')).toMatchObject({ status: 'running', leaseUntil: new Date(t0 + 40_000).toISOString() });
    await writer.completeRun('payment:p:paid', 'a', new Date(t0 + 20_000));
    await writer.close();
    const restarted = await openEmbedded(dir);
    expect(await restarted.getRun('payment:p:paid')).toMatchObject({ status: 'done' });
    await Promise.all([reader.close(), restarted.close()]);
  });

  it('refuses an event whose id or body a restart could not read back, and stays open for a second instance and a restart', async () => {
    const dir = await scratch.dir();
    const store = await openEmbedded(dir);
    const good = sampleEvent('evt_good');
    // Before this check, the numeric id was written and every later open refused the store as damaged.
    const [badId, badBody, ok] = await Promise.allSettled([
      store.insertEvent(sampleEvent('evt_x', { id: 42 as unknown as string })),
      store.insertEvent(sampleEvent('evt_null', { body: null as unknown as string })),
      store.insertEvent(good),
    ]);
    expect(badId).toMatchObject({ status: 'rejected', reason: expect.objectContaining({ message: expect.stringMatching(/id must be text/) }) });
    expect(badBody).toMatchObject({ status: 'rejected', reason: expect.objectContaining({ message: expect.stringMatching(/body must be text/) }) });
    expect(ok.status).toBe('fulfilled');
    const reader = await openEmbedded(dir);
    await store.close();
    const restarted = await openEmbedded(dir);
    for (const other of [reader, restarted]) {
      expect((await other.getEvent('evt_good'))?.body).toBe(good.body);
      expect(await other.getEvent('evt_null')).toBeUndefined();
    }
    await Promise.all([reader.close(), restarted.close()]);
  });

  it('creates a store folder that does not exist', async () => {
    const dir = join(await scratch.dir(), 'a', 'b');
    const store = await openEmbedded(dir);
    await store.insertEvent(sampleEvent('evt_1'));
    await store.close();
    expect(await readdir(dir)).toContain('journal-0.jsonl');
  });

  it('says which folder it cannot open', async () => {
    const file = join(await scratch.dir(), 'not-a-folder');
    await writeFile(file, 'x');
    await expect(openEmbedded(file)).rejects.toThrow(new RegExp(`^Cannot open the store ${file}: it \\(or a folder above it\\) is a file, not a folder\\.`));
    await expect(openEmbedded(file)).rejects.toBeInstanceOf(StoreError);
  });

  it('refuses work once closed', async () => {
    const store = await openEmbedded(await scratch.dir());
    await store.close();
    await expect(store.insertEvent(sampleEvent('evt_1'))).rejects.toThrow(StoreError);
    await expect(store.getEvent('evt_1')).rejects.toThrow(/closed/);
  });

  it('fails one malformed operation alone and keeps the journal readable', async () => {
    const dir = await scratch.dir();
    const store = await openEmbedded(dir);
    await store.enqueueRun({ key: 'r', kind: 'fulfillment', data: {} });
    const [bad, good] = await Promise.allSettled([
      store.claimRun('r', { owner: 'a', leaseMs: 1000, now: new Date(Number.NaN) }),
      store.insertEvent(sampleEvent('evt_1')),
    ]);
    expect(bad.status).toBe('rejected');
    expect(good).toEqual({ status: 'fulfilled', value: { inserted: true } });
    await store.close();
    const reopened = await openEmbedded(dir);
    expect(await reopened.getRun('r')).toMatchObject({ status: 'pending', attempts: 0 });
    expect(await reopened.getEvent('evt_1')).toBeDefined();
    await reopened.close();
  });

  it('compacts into a snapshot, keeps every body, and deletes segments once their bodies are pruned', async () => {
    const dir = await scratch.dir();
    const store = await openEmbedded(dir, { compactMinBytes: 64 * 1024 });
    const ids = Array.from({ length: 200 }, (_, i) => `evt_${i}`);
    for (let i = 0; i < ids.length; i += 20) await Promise.all(ids.slice(i, i + 20).map((id) => store.insertEvent(sampleEvent(id))));
    const before = await segments(dir);
    expect(before.length).toBeGreaterThan(1);
    const current = before.at(-1) as number;
    expect((await stat(join(dir, `journal-${current}.jsonl`))).size).toBeGreaterThan(0);
    await store.compact();
    expect(await segments(dir)).toEqual([...before, current + 1]);
    expect((await stat(join(dir, `journal-${current + 1}.jsonl`))).size).toBe(0);
    expect(JSON.parse(await readFile(join(dir, 'snapshot.json'), 'utf8'))).toMatchObject({ version: 1, journalGeneration: current + 1 });
    await store.close();

    const reopened = await openEmbedded(dir, { compactMinBytes: 64 * 1024 });
    for (const id of ids) expect((await reopened.getEvent(id))?.body).toBe(sampleBody(id));
    for (const id of ids) {
      await reopened.claimRun(`event:${id}`, { owner: 'w', leaseMs: 60_000 });
      await reopened.completeRun(`event:${id}`, 'w');
    }
    expect(await reopened.prune({ payloadsBefore: new Date(Date.now() + 60_000).toISOString() })).toEqual({ payloadsPruned: 200, eventsForgotten: 0 });
    await reopened.compact();
    const gen = (JSON.parse(await readFile(join(dir, 'snapshot.json'), 'utf8')) as { journalGeneration: number }).journalGeneration;
    expect(await segments(dir)).toEqual([gen]);
    // Bodies were read from the deleted segments: their read handles went with them (an open
    // handle would keep a deleted file's disk space), and closing lets go of every file.
    if (process.platform === 'linux') expect([...(await openDescriptors(dir)).keys()].filter((name) => name.endsWith('(deleted)'))).toEqual([]);
    expect(await reopened.insertEvent(sampleEvent('evt_7'))).toEqual({ inserted: false });
    expect(await reopened.getEvent('evt_7')).toMatchObject({ id: 'evt_7', body: undefined });
    await reopened.close();
    if (process.platform === 'linux') expect([...(await openDescriptors(dir)).keys()]).toEqual([]);
  });

  /** Insert events back to back (no pause between them) until the journal has grown by `bytes`. */
  async function writeBackToBack(store: EmbeddedStore, dir: string, prefix: string, bytes: number): Promise<void> {
    const start = await journalBytes(dir);
    for (let i = 0; (await journalBytes(dir)) - start < bytes; i += 1) await store.insertEvent(sampleEvent(`${prefix}_${i}`));
  }
  async function journalBytes(dir: string): Promise<number> {
    let total = 0;
    for (const gen of await segments(dir)) total += (await stat(join(dir, `journal-${gen}.jsonl`))).size;
    return total;
  }
  const snapshotGen = async (dir: string) =>
    (JSON.parse(await readFile(join(dir, 'snapshot.json'), 'utf8').catch(() => '{"journalGeneration":0}')) as { journalGeneration: number }).journalGeneration;

  it('puts a due compaction off while writes keep coming (a burst), and compacts once they pause', async () => {
    const dir = await scratch.dir();
    const store = await openEmbedded(dir, { compactMinBytes: 32 * 1024, compactLullMs: 1500 });
    await writeBackToBack(store, dir, 'burst', 3 * 32 * 1024);
    expect(await snapshotGen(dir)).toBe(0);
    // The pause: the compaction comes by itself.
    await vi.waitFor(async () => expect(await snapshotGen(dir)).toBeGreaterThan(0), { timeout: 20_000, interval: 100 });
    await store.close();
    const reopened = await openEmbedded(dir);
    expect((await reopened.getEvent('burst_0'))?.body).toBe(sampleBody('burst_0'));
    await reopened.close();
  });

  it('compacts a due journal when a process that wrote closes (a CLI command), and not when a reader closes', async () => {
    const dir = await scratch.dir();
    const store = await openEmbedded(dir, { compactMinBytes: 32 * 1024, compactLullMs: 60_000 });
    await writeBackToBack(store, dir, 'short', 2 * 32 * 1024);
    expect(await snapshotGen(dir)).toBe(0);
    await store.close();
    expect(await snapshotGen(dir)).toBeGreaterThan(0);

    const writer = await openEmbedded(dir, { compactMinBytes: 32 * 1024, compactLullMs: 60_000 });
    await writeBackToBack(writer, dir, 'more', 2 * 32 * 1024);
    // Closed by a crash, say: the journal stays over its threshold.
    const files = await filesOf(dir);
    const reader = await openEmbedded(dir, { compactMinBytes: 32 * 1024 });
    expect((await reader.getEvent('more_0'))?.body).toBe(sampleBody('more_0'));
    await reader.close();
    expect(await filesOf(dir)).toEqual(files);
    await writer.close();
  });

  it('compacts a journal grown to four times its threshold even while writes keep coming', async () => {
    const dir = await scratch.dir();
    const store = await openEmbedded(dir, { compactMinBytes: 32 * 1024, compactLullMs: 60_000 });
    await writeBackToBack(store, dir, 'burst', 6 * 32 * 1024);
    await vi.waitFor(async () => expect(await snapshotGen(dir)).toBeGreaterThan(0), { timeout: 20_000, interval: 100 });
    await store.close();
  });

  it('shares one folder between two instances: each sees the other, across compactions', async () => {
    const dir = await scratch.dir();
    const a = await openEmbedded(dir);
    const b = await openEmbedded(dir);
    await a.insertEvent(sampleEvent('from_a'));
    expect((await b.getEvent('from_a'))?.body).toBe(sampleBody('from_a'));
    expect(await b.insertEvent(sampleEvent('from_a'))).toEqual({ inserted: false });
    await b.compact();
    await a.insertEvent(sampleEvent('after_compaction'));
    expect(await b.getEvent('after_compaction')).toBeDefined();
    const claims = await Promise.all([a, b, a, b].map((store, i) => store.claimRun('event:from_a', { owner: `w${i}`, leaseMs: 60_000 })));
    expect(claims.filter(Boolean)).toHaveLength(1);
    await Promise.all([a.close(), b.close()]);
    const reopened = await openEmbedded(dir);
    expect((await reopened.listEvents()).map((event) => event.id).sort()).toEqual(['after_compaction', 'from_a']);
    await reopened.close();
  });
});

describe('EmbeddedStore compaction without stopping writes', () => {
  it('seals the segment, writes on in the next one while the snapshot is written, and a second instance and a restart read both', async () => {
    const dir = await scratch.dir();
    const store = await openEmbedded(dir);
    const reader = await openEmbedded(dir);
    for (let i = 0; i < 300; i++) await store.insertEvent(sampleEvent(`before_${i}`));
    const compacted = store.compact();
    const during = await Promise.all(Array.from({ length: 20 }, (_, i) => store.insertEvent(sampleEvent(`during_${i}`))));
    expect(during.every((result) => result.inserted)).toBe(true);
    await compacted;
    expect(await readFile(join(dir, 'journal-0.jsonl'), 'utf8')).toMatch(/\{"t":"seal","next":1\}\n$/);
    expect(JSON.parse(await readFile(join(dir, 'snapshot.json'), 'utf8'))).toMatchObject({ version: 1, journalGeneration: 1 });
    // The inserts made meanwhile are in the next segment, not in the snapshot of the seal.
    expect(await readFile(join(dir, 'journal-1.jsonl'), 'utf8')).toContain('"id":"during_19"');
    const ids = [...Array.from({ length: 300 }, (_, i) => `before_${i}`), ...Array.from({ length: 20 }, (_, i) => `during_${i}`)].sort();
    expect((await reader.listEvents({ limit: 1000 })).map((event) => event.id).sort()).toEqual(ids);
    await Promise.all([store.close(), reader.close()]);
    const reopened = await openEmbedded(dir);
    expect((await reopened.listEvents({ limit: 1000 })).map((event) => event.id).sort()).toEqual(ids);
    expect((await reopened.getEvent('during_3'))?.body).toBe(sampleBody('during_3'));
    await reopened.close();
  });

  it('two instances compacting at once: one snapshot is put in place, the other set aside, nothing lost', async () => {
    const dir = await scratch.dir();
    const a = await openEmbedded(dir);
    const b = await openEmbedded(dir);
    for (let i = 0; i < 50; i++) await (i % 2 ? a : b).insertEvent(sampleEvent(`evt_${i}`));
    await Promise.all([a.compact(), b.compact(), a.insertEvent(sampleEvent('mid_a')), b.insertEvent(sampleEvent('mid_b'))]);
    await Promise.all([a.compact(), b.insertEvent(sampleEvent('late_b'))]);
    await Promise.all([a.close(), b.close()]);
    expect((await readdir(dir)).filter((name) => name.includes('.next'))).toEqual([]);
    const reopened = await openEmbedded(dir);
    expect((await reopened.listEvents({ limit: 100 })).map((event) => event.id).sort()).toEqual(
      [...Array.from({ length: 50 }, (_, i) => `evt_${i}`), 'late_b', 'mid_a', 'mid_b'].sort(),
    );
    await reopened.close();
  });

  it('on open, deletes the snapshots a crashed process was writing, and leaves a live process its own', async () => {
    const dir = await scratch.dir();
    const store = await openEmbedded(dir);
    await store.insertEvent(sampleEvent('evt_1'));
    await store.close();
    // No process has pid 2^22 + 1 (above Linux's pid_max), so that writer is gone.
    const gone = `snapshot.json.${2 ** 22 + 1}-0b5d6c1e-8a4f-4d3a-9a63-0d7b8e9c1f2a.next`;
    const mine = `snapshot.json.${process.pid}-7f0e2a44-1c3b-4e5d-8f6a-2b1c0d9e8f7a.next`;
    for (const name of [gone, mine, 'snapshot.json.next']) await writeFile(join(dir, name), '{"version":1,"journalGen');
    const reopened = await openEmbedded(dir);
    expect((await readdir(dir)).filter((name) => name.includes('.next'))).toEqual([mine]);
    expect(await reopened.getEvent('evt_1')).toBeDefined();
    await reopened.close();
  });

  it('refuses to open when a line follows the seal of a segment, and changes no file', async () => {
    const dir = await scratch.dir();
    const store = await openEmbedded(dir);
    await store.insertEvent(sampleEvent('evt_1'));
    await store.compact();
    await store.close();
    // As if the compaction stopped before its snapshot: a reopen replays journal-0, then its seal.
    await rm(join(dir, 'snapshot.json'));
    const journal = join(dir, 'journal-0.jsonl');
    await appendFile(journal, '{"t":"retry","at":1,"key":"event:evt_1"}\n');
    const before = await filesOf(dir);
    const error = await openEmbedded(dir).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(StoreError);
    expect((error as StoreError).message).toMatch(new RegExp(`${journal} has a damaged line at byte \\d+ \\(a line after the seal that closed the segment\\)`));
    expect(await filesOf(dir)).toEqual(before);
  });
});

describe('EmbeddedStore damage', () => {
  async function storeWithEvents(dir: string, count: number): Promise<void> {
    const store = await openEmbedded(dir);
    for (let i = 0; i < count; i++) await store.insertEvent(sampleEvent(`evt_${i}`));
    await store.close();
  }

  it('ignores a torn last journal line (crash mid-append) and cuts it away on the next write only', async () => {
    const dir = await scratch.dir();
    await storeWithEvents(dir, 5);
    const journal = join(dir, 'journal-0.jsonl');
    const whole = await readFile(journal);
    await appendFile(journal, '{"t":"event","at":1700000000000,"event":{"id":"torn","type":"pay');
    const torn = await readFile(journal);

    const logger = recordingLogger();
    const store = await openEmbedded(dir, { logger });
    expect((await store.listEvents()).map((event) => event.id).sort()).toEqual(['evt_0', 'evt_1', 'evt_2', 'evt_3', 'evt_4']);
    expect(await store.getEvent('torn')).toBeUndefined();
    expect(logger.warnings).toEqual([expect.stringMatching(/unfinished last line/)]);
    expect(await readFile(journal)).toEqual(torn);

    await store.insertEvent(sampleEvent('evt_5'));
    expect(logger.warnings).toHaveLength(2);
    expect(logger.warnings[1]).toMatch(/Removed an unfinished last line/);
    const repaired = await readFile(journal);
    expect(repaired.subarray(0, whole.length)).toEqual(whole);
    expect(repaired.subarray(whole.length).toString()).toMatch(/^\{"t":"event".*"id":"evt_5".*\}\n$/s);
    await store.close();

    const quiet = recordingLogger();
    const reopened = await openEmbedded(dir, { logger: quiet });
    expect(await reopened.listEvents()).toHaveLength(6);
    expect(quiet.warnings).toEqual([]);
    await reopened.close();
  });

  it('refuses to open with a damaged line in the middle of the journal, and changes no file', async () => {
    const dir = await scratch.dir();
    await storeWithEvents(dir, 5);
    const journal = join(dir, 'journal-0.jsonl');
    const lines = (await readFile(journal, 'utf8')).split('\n');
    lines[2] = `${lines[2]?.slice(0, 60)}\u0000\u0000${lines[2]?.slice(62)}`;
    await writeFile(journal, lines.join('\n'));
    const before = await filesOf(dir);

    const error = await openEmbedded(dir).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(StoreError);
    expect((error as StoreError).message).toContain(journal);
    expect((error as StoreError).message).toMatch(/damaged line at byte \d+.*No file was changed.*backup/);
    expect(await filesOf(dir)).toEqual(before);
    // The failed open let go of what it had opened (the journal segment, the lock file).
    if (process.platform === 'linux') expect([...(await openDescriptors(dir)).keys()]).toEqual([]);
  });

  it.each([
    ['truncated', (bytes: Buffer) => bytes.subarray(0, Math.floor(bytes.length / 2))],
    ['empty', () => Buffer.alloc(0)],
    ['null', () => Buffer.from('null')],
    ['not a snapshot', () => Buffer.from('{"events":{}}')],
  ])('refuses to open with a %s snapshot.json, and changes no file', async (_kind, damage) => {
    const dir = await scratch.dir();
    const store = await openEmbedded(dir);
    await store.insertEvent(sampleEvent('evt_1'));
    await store.compact();
    await store.insertEvent(sampleEvent('evt_2'));
    await store.close();
    const snapshot = join(dir, 'snapshot.json');
    await writeFile(snapshot, damage(await readFile(snapshot)));
    const before = await filesOf(dir);

    const error = await openEmbedded(dir).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(StoreError);
    expect((error as StoreError).message).toContain(snapshot);
    expect((error as StoreError).message).toMatch(/damaged.*left untouched.*backup/);
    expect(await filesOf(dir)).toEqual(before);
  });
});

describe('EmbeddedStore with other processes', () => {
  it('after a SIGKILL mid-write, has every event whose insert had resolved', async () => {
    const dir = await scratch.dir();
    const worker = scratch.worker({ mode: 'crash', dir, concurrency: 20 });
    const acked: string[] = [];
    while (acked.length < 400) acked.push(await worker.nextLine());
    worker.child.kill('SIGKILL');
    await worker.exited;

    const store = await openEmbedded(dir, { logger: recordingLogger() });
    for (const id of acked) expect((await store.getEvent(id))?.body, id).toBe(sampleBody(id));
    // And it accepts writes again (taking over the dead process's lock).
    expect(await store.insertEvent(sampleEvent('after_crash'))).toEqual({ inserted: true });
    await store.close();
  });

  /** Two processes insert their own events and claim the same 300 runs at the same time. */
  async function race(unsafeNoLock: boolean) {
    const dir = await scratch.dir();
    const runKeys = Array.from({ length: 300 }, (_, i) => `shared:${i}`);
    const setup = await openEmbedded(dir);
    await Promise.all(runKeys.map((key) => setup.enqueueRun({ key, kind: 'fulfillment', data: {} })));
    await setup.close();

    const workers = ['p1', 'p2'].map((name) => scratch.worker({ mode: 'race', dir, name, events: 1500, runKeys, concurrency: 16, unsafeNoLock }));
    for (const worker of workers) expect(await worker.nextLine()).toBe('ready');
    for (const worker of workers) worker.child.stdin.write('go\n');
    const results = await Promise.all(workers.map(async (worker) => JSON.parse(await worker.nextLine()) as RaceResult));

    const claims = results.flatMap((result) => result.claimed);
    const claimedTwice = runKeys.filter((key) => claims.filter((claimed) => claimed === key).length > 1);
    const missing: string[] = [];
    let reopenError: unknown;
    try {
      const store = await openEmbedded(dir);
      for (const id of results.flatMap((result) => result.acked)) if (!(await store.getEvent(id))) missing.push(id);
      await store.close();
    } catch (error) {
      reopenError = error;
    }
    return { results, claims, claimedTwice, missing, reopenError, dir, runKeys };
  }

  it('lose nothing and claim each run once when they share the store', async () => {
    const { results, claims, claimedTwice, missing, reopenError, dir, runKeys } = await race(false);
    expect(results.map((result) => result.errors)).toEqual([[], []]);
    expect(results.map((result) => result.acked.length)).toEqual([1500, 1500]);
    expect(reopenError).toBeUndefined();
    expect(missing).toEqual([]);
    expect(claimedTwice).toEqual([]);
    expect(claims).toHaveLength(runKeys.length);
    const store = await openEmbedded(dir);
    for (const [i, result] of results.entries()) {
      for (const key of result.claimed) expect(await store.getRun(key)).toMatchObject({ status: 'running', attempts: 1, owner: `p${i + 1}` });
    }
    expect((await store.listEvents({ limit: 10_000 })).length).toBe(3000);
    await store.close();
  });

  it('without the lock, demonstrably lose events or claim runs twice (what the lock prevents)', async () => {
    const { results, claimedTwice, missing, reopenError } = await race(true);
    const summary = {
      acked: results.map((result) => result.acked.length),
      errors: results.map((result) => result.errors.length),
      missing: missing.length,
      claimedTwice: claimedTwice.length,
      reopenError: reopenError instanceof Error ? reopenError.message : undefined,
    };
    const lost = reopenError !== undefined || missing.length > 0 || claimedTwice.length > 0;
    expect(lost, JSON.stringify(summary)).toBe(true);
  });
});

describe('EmbeddedStore journal writes', () => {
  it.skipIf(process.platform !== 'linux')('on Linux, writes the journal through a descriptor opened O_DSYNC (one durable write per batch, no separate fdatasync)', async () => {
    const dir = await scratch.dir();
    const store = await openEmbedded(dir);
    try {
      expect((await store.insertEvent(sampleEvent('evt_dsync'))).inserted).toBe(true);
      const journal = [...(await openDescriptors(dir))].find(([name]) => /^journal-\d+\.jsonl$/.test(name));
      expect(journal, 'the store keeps its journal segment open').toBeDefined();
      expect(journal![1] & constants.O_DSYNC).toBe(constants.O_DSYNC);
      // The access mode is the low two bits (O_ACCMODE, which node:fs does not export).
      expect(journal![1] & 3).toBe(constants.O_RDWR);
    } finally {
      await store.close();
    }
  });
});

import { copyFile, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, StoreError } from '../../src/errors/index.js';
import { checkStore, recoverStore, type EmbeddedStoreOptions, type StoreCheckReport } from '../../src/store/embedded/index.js';
import { sampleBody, sampleEvent } from './fixtures/sample-event.js';
import { everything, filesOf, openEmbedded, recordingLogger, Scratch } from './helpers.js';

const scratch = new Scratch();
afterEach(() => scratch.cleanUp());

/** A store with `count` events and something of every other kind. */
async function filledStore(count: number, options: Partial<EmbeddedStoreOptions> = {}): Promise<string> {
  const dir = await scratch.dir();
  const store = await openEmbedded(dir, options);
  for (let i = 0; i < count; i++) {
    await store.insertEvent(sampleEvent(`evt_${i}`));
    // Compaction waits for a lull that back-to-back inserts never leave: ask for it mid-way.
    if (options.compactMinBytes !== undefined && i === Math.floor(count / 4)) await store.compact();
  }
  await store.claimRun('event:evt_0', { owner: 'w', leaseMs: 60_000 });
  await store.completeRun('event:evt_0', 'w');
  await store.updateResource({ kind: 'payment', id: 'pay_1', outcome: 'paid', snapshot: { id: 'pay_1', amount: '1.00' }, orderId: 'order_1' });
  await store.insertDeadLetter({ receivedAt: new Date().toISOString(), reason: 'bad JSON', body: '{"x":', headers: {} });
  await store.close();
  return dir;
}

const lineStarts = (bytes: Buffer) => [0, ...[...bytes.entries()].filter(([, byte]) => byte === 10).map(([i]) => i + 1)].filter((start) => start < bytes.length);
const problemKinds = (report: StoreCheckReport) => report.problems.map((problem) => `${problem.severity}:${problem.kind}:${problem.file}`);
const recoveryDirs = async (dir: string) => (await readdir(dir)).filter((name) => name.startsWith('recovery-'));

async function contents(dir: string) {
  const store = await openEmbedded(dir);
  try {
    return await everything(store);
  } finally {
    await store.close();
  }
}

describe('checkStore', () => {
  it('finds nothing wrong with a healthy store, and recover changes no file and makes no backup', async () => {
    const dir = await filledStore(12, { compactMinBytes: 8 * 1024 });
    const report = await checkStore(dir);
    expect(report).toMatchObject({ status: 'healthy', opens: true, problems: [], recovery: { needed: false, actions: [] } });
    expect(report.snapshot).toMatchObject({ present: true, ok: true });
    expect(report.segments.length).toBeGreaterThan(1);
    // Every line of every segment is accounted for, and the events' bodies are found where they are.
    expect(report.segments.reduce((sum, segment) => sum + (segment.ops.event ?? 0), 0)).toBe(12);
    expect(report.segments.reduce((sum, segment) => sum + segment.bodies, 0)).toBe(12);

    const before = await filesOf(dir);
    const result = await recoverStore(dir);
    expect(result).toMatchObject({ changed: false, backup: undefined, actions: [] });
    expect(await filesOf(dir)).toEqual(before);
    expect(await recoveryDirs(dir)).toEqual([]);
  });

  it('reports a torn last line as a warning (the store opens), and recover cuts it off with a copy kept', async () => {
    const dir = await filledStore(5);
    const journal = join(dir, 'journal-0.jsonl');
    const whole = await readFile(journal);
    const torn = Buffer.concat([whole, Buffer.from('{"t":"event","at":1700000000000,"event":{"id":"torn","ty')]);
    await writeFile(journal, torn);

    const report = await checkStore(dir);
    expect(report).toMatchObject({ status: 'warnings', opens: true });
    expect(report.problems).toEqual([expect.objectContaining({ severity: 'warning', kind: 'torn-tail', file: 'journal-0.jsonl', offset: whole.length, bytes: torn.length - whole.length })]);
    expect(report.segments[0]).toMatchObject({ tornBytes: torn.length - whole.length, damagedLines: 0 });

    const result = await recoverStore(dir, { now: new Date('2030-01-02T03:04:05.678Z') });
    expect(result.actions).toEqual([expect.objectContaining({ kind: 'truncate', file: 'journal-0.jsonl', fromBytes: torn.length, toBytes: whole.length })]);
    expect(result.dropped).toMatchObject({ lines: 0, bytes: torn.length - whole.length, events: 0 });
    expect(result.backup).toBe(join(dir, 'recovery-2030-01-02T03-04-05-678Z'));
    expect(await readFile(journal)).toEqual(whole);
    expect(await readFile(join(result.backup!, 'journal-0.jsonl'))).toEqual(torn);
    expect(result).toMatchObject({ changed: true, opens: true, after: { status: 'healthy' } });
    const logger = recordingLogger();
    const store = await openEmbedded(dir, { logger });
    expect(await store.listEvents()).toHaveLength(5);
    expect(logger.warnings).toEqual([]);
    await store.close();
  });

  it('names a NUL-filled region mid-journal by byte offset; recover keeps every event before it and says what it dropped', async () => {
    const dir = await filledStore(10);
    const journal = join(dir, 'journal-0.jsonl');
    const original = await readFile(journal);
    const starts = lineStarts(original);
    // Zero 300 bytes inside the 5th line (an event line: evt_4).
    const damaged = Buffer.from(original);
    damaged.fill(0, (starts[4] as number) + 200, (starts[4] as number) + 500);
    await writeFile(journal, damaged);
    const openError = await openEmbedded(dir).catch((error: unknown) => error);
    expect(openError).toBeInstanceOf(StoreError);

    const report = await checkStore(dir);
    expect(report).toMatchObject({ status: 'damaged', opens: false });
    expect(problemKinds(report)).toEqual(['damage:damaged-line:journal-0.jsonl']);
    expect(report.problems[0]).toMatchObject({ offset: starts[4], bytes: (starts[5] as number) - (starts[4] as number) });
    expect(report.problems[0]!.message).toMatch(/^journal-0\.jsonl: damaged line at byte \d+ .*300 NUL bytes.*it looks like event evt_4.*the store will not open\.$/);
    expect(report.segments[0]!.damaged).toEqual([expect.objectContaining({ offset: starts[4], reason: expect.stringMatching(/300 NUL bytes/) })]);
    const afterLines = starts.length - 5;
    expect(report.recovery).toMatchObject({
      needed: true,
      keptEvents: 4,
      actions: [{ kind: 'truncate', file: 'journal-0.jsonl', fromBytes: original.length, toBytes: starts[4] }],
      dropped: { lines: afterLines + 1, bytes: original.length - (starts[4] as number), events: 5, eventIds: ['evt_5', 'evt_6', 'evt_7', 'evt_8', 'evt_9'] },
    });
    // check wrote nothing.
    expect(await readFile(journal)).toEqual(damaged);

    const result = await recoverStore(dir);
    expect(result).toMatchObject({ changed: true, opens: true, after: { status: 'healthy' } });
    expect(await readFile(join(result.backup!, 'journal-0.jsonl'))).toEqual(damaged);
    expect(await readFile(journal)).toEqual(original.subarray(0, starts[4]));
    const { events } = await contents(dir);
    expect(events.map((event) => event.id).sort()).toEqual(['evt_0', 'evt_1', 'evt_2', 'evt_3']);
    for (const event of events) expect(event.body).toBe(sampleBody(event.id));
  });

  it.each([
    ['an unknown op type', '{"t":"bogus","at":1}\n', /not a journal op \(t="bogus"\)/],
    ['an empty line', '\n', /empty line/],
    ['an op that cannot be applied', '{"t":"resource","at":1}\n', /cannot be applied/],
  ])('refuses %s in the middle of the journal as open() does, and recovers the lines before it', async (_name, line, reason) => {
    const dir = await filledStore(4);
    const journal = join(dir, 'journal-0.jsonl');
    const original = await readFile(journal);
    const starts = lineStarts(original);
    const cut = starts[2] as number;
    await writeFile(journal, Buffer.concat([original.subarray(0, cut), Buffer.from(line), original.subarray(cut)]));
    await expect(openEmbedded(dir)).rejects.toThrow();

    const report = await checkStore(dir);
    expect(report).toMatchObject({ status: 'damaged', opens: false });
    expect(report.problems).toEqual([expect.objectContaining({ kind: 'damaged-line', offset: cut, message: expect.stringMatching(reason) })]);
    await recoverStore(dir);
    expect((await contents(dir)).events.map((event) => event.id).sort()).toEqual(['evt_0', 'evt_1']);
  });

  it('rebuilds a damaged snapshot from the journals when every segment since generation 0 is there: nothing is lost', async () => {
    const dir = await filledStore(30, { compactMinBytes: 8 * 1024 });
    const before = await contents(dir);
    const snapshot = join(dir, 'snapshot.json');
    const bytes = await readFile(snapshot);
    const zeroed = Buffer.from(bytes).fill(0, 100, 600);
    await writeFile(snapshot, zeroed);
    await expect(openEmbedded(dir)).rejects.toThrow(/snapshot\.json is damaged/);

    const report = await checkStore(dir);
    expect(report).toMatchObject({ status: 'damaged', opens: false, snapshot: { present: true, ok: false, reason: expect.stringMatching(/500 NUL bytes/) } });
    expect(problemKinds(report)).toEqual(['damage:snapshot-damaged:snapshot.json']);
    expect(report.recovery.actions).toEqual([expect.objectContaining({ kind: 'rewrite-snapshot', generation: report.segments.at(-1)!.gen })]);
    expect(report.recovery.dropped).toMatchObject({ lines: 0, events: 0, payloads: 0 });

    const result = await recoverStore(dir);
    expect(result).toMatchObject({ changed: true, opens: true, after: { status: 'healthy' } });
    expect(await readFile(join(result.backup!, 'snapshot.json'))).toEqual(zeroed);
    expect(await contents(dir)).toEqual(before);
  });

  it('refuses to rebuild a damaged snapshot once the early segments are gone, explains what would be lost, and changes nothing', async () => {
    const dir = await scratch.dir();
    const store = await openEmbedded(dir);
    for (let i = 0; i < 5; i++) await store.insertEvent(sampleEvent(`old_${i}`));
    for (let i = 0; i < 5; i++) {
      await store.claimRun(`event:old_${i}`, { owner: 'w', leaseMs: 60_000 });
      await store.completeRun(`event:old_${i}`, 'w');
    }
    await store.prune({ payloadsBefore: new Date(Date.now() + 60_000).toISOString() });
    await store.compact();
    await store.insertEvent(sampleEvent('new_0'));
    await store.compact();
    await store.close();
    expect((await readdir(dir)).filter((name) => name.startsWith('journal-'))).not.toContain('journal-0.jsonl');
    await writeFile(join(dir, 'snapshot.json'), '{"version":1,"journalGen');
    const files = await filesOf(dir);

    const report = await checkStore(dir);
    expect(report.status).toBe('damaged');
    expect(report.recovery.refusal).toMatch(/journal-0\.jsonl…journal-\d\.jsonl were deleted after earlier compactions.*exists only in snapshot\.json.*Restore snapshot\.json from a backup/);
    const error = await recoverStore(dir).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(StoreError);
    expect((error as Error).message).toMatch(/^Cannot recover the store .*Nothing was changed\.$/);
    expect(await filesOf(dir)).toEqual(files);
    expect(await recoveryDirs(dir)).toEqual([]);
  });

  it('reports a deleted segment that holds event bodies; recover keeps those events without their body', async () => {
    const dir = await filledStore(40, { compactMinBytes: 16 * 1024 });
    const before = await contents(dir);
    const segments = (await checkStore(dir)).segments;
    const older = segments.find((segment) => segment.role === 'older' && segment.bodies > 0)!;
    expect(older).toBeDefined();
    await rm(join(dir, older.file));

    const report = await checkStore(dir);
    expect(report).toMatchObject({ status: 'damaged', opens: true });
    expect(report.problems).toEqual([expect.objectContaining({ kind: 'missing-segment', file: older.file, message: expect.stringMatching(new RegExp(`^${older.file} is missing: the raw bodies of ${older.bodies} event`)) })]);
    const lost = report.problems[0]!.eventIds!;
    expect(lost).toHaveLength(older.bodies);
    expect(report.recovery).toMatchObject({ actions: [expect.objectContaining({ kind: 'rewrite-snapshot' })], dropped: { lines: 0, payloads: older.bodies } });

    const result = await recoverStore(dir);
    expect(result).toMatchObject({ changed: true, opens: true, after: { status: 'healthy' } });
    const after = await contents(dir);
    expect(after.events.map((event) => event.id)).toEqual(before.events.map((event) => event.id));
    for (const event of after.events) expect(event.body, event.id).toBe(lost.includes(event.id) ? undefined : sampleBody(event.id));
    expect(after.runs).toEqual(before.runs);
  });

  /**
   * Three events, a compaction (its snapshot copied to `old-snapshot`), three more (journal-1 as it
   * then was copied to `old-journal`), a compaction, one more event in journal-2.
   */
  async function compactedTwice(dir: string): Promise<void> {
    const store = await openEmbedded(dir);
    for (let i = 0; i < 3; i++) await store.insertEvent(sampleEvent(`a_${i}`));
    await store.compact();
    await copyFile(join(dir, 'snapshot.json'), join(dir, 'old-snapshot'));
    for (let i = 0; i < 3; i++) await store.insertEvent(sampleEvent(`b_${i}`));
    await copyFile(join(dir, 'journal-1.jsonl'), join(dir, 'old-journal'));
    await store.compact();
    await store.insertEvent(sampleEvent('c_0'));
    await store.close();
  }

  it('follows the seals from an older snapshot (a compaction cut short before its snapshot): nothing is missing', async () => {
    const dir = await scratch.dir();
    await compactedTwice(dir);
    const before = await contents(dir);
    await copyFile(join(dir, 'old-snapshot'), join(dir, 'snapshot.json'));
    // journal-1 ends with the seal that leads on to journal-2.
    expect((await readFile(join(dir, 'journal-1.jsonl'), 'utf8')).endsWith('{"t":"seal","next":2}\n')).toBe(true);
    expect(await contents(dir)).toEqual(before);
    const report = await checkStore(dir);
    expect(report).toMatchObject({ status: 'healthy', opens: true, generation: 1, recovery: { needed: false } });
    expect(report.segments.map((segment) => `${segment.file}:${segment.role}`)).toEqual(['journal-0.jsonl:older', 'journal-1.jsonl:sealed', 'journal-2.jsonl:current']);
  });

  it('reports journals newer than the snapshot (an old snapshot and journal restored), which the store silently ignores; recover replays them', async () => {
    const dir = await scratch.dir();
    await compactedTwice(dir);
    const before = await contents(dir);
    await copyFile(join(dir, 'old-snapshot'), join(dir, 'snapshot.json'));
    // The backup's journal-1 is from before the seal that led on to journal-2.
    await copyFile(join(dir, 'old-journal'), join(dir, 'journal-1.jsonl'));
    await rm(join(dir, 'old-snapshot'));
    await rm(join(dir, 'old-journal'));
    // The store opens and silently lacks what journal-2 holds.
    expect((await contents(dir)).events).toHaveLength(6);

    const report = await checkStore(dir);
    expect(report).toMatchObject({ status: 'damaged', opens: true, generation: 1 });
    expect(problemKinds(report)).toEqual(['damage:newer-segment:journal-2.jsonl']);
    expect(report.recovery.actions).toEqual([expect.objectContaining({ kind: 'rewrite-snapshot', generation: 2 })]);
    await recoverStore(dir);
    expect(await contents(dir)).toEqual(before);
  });

  it('only warns about a damaged line in an older segment that no kept body is in', async () => {
    const dir = await scratch.dir();
    const store = await openEmbedded(dir);
    await store.enqueueRun({ key: 'r', kind: 'fulfillment', data: {} });
    await store.claimRun('r', { owner: 'w', leaseMs: 60_000 });
    await store.compact();
    await store.insertEvent(sampleEvent('evt_1'));
    await store.close();
    // Compaction keeps segment 0 only while it holds bodies: put one back by hand, and damage it.
    await writeFile(join(dir, 'journal-0.jsonl'), '{"t":"enqueue","at":1,"run":{"key":"r","kind":"fulfillment","data":{}}}\n\u0000\u0000\u0000\n');
    const report = await checkStore(dir);
    expect(report).toMatchObject({ status: 'warnings', opens: true, recovery: { needed: false } });
    expect(problemKinds(report)).toEqual(['warning:damaged-line:journal-0.jsonl']);
    expect(report.problems[0]!.message).toMatch(/all 3 bytes are NUL.*an older segment: its operations are in snapshot\.json/);
  });

  it('says there is no store rather than creating one', async () => {
    const dir = join(await scratch.dir(), 'nothing-here');
    await expect(checkStore(dir)).rejects.toThrow(ConfigError);
    await expect(recoverStore(dir)).rejects.toThrow(/There is no store at .*nothing-here: the folder does not exist/);
    await expect(readdir(dir)).rejects.toThrow(/ENOENT/);
  });
});

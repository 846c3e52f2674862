import { execFileSync } from 'node:child_process';
import { cp, open, readFile, statfs, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { EventRecord } from '../../src/store/index.js';
import { newWebhookSecret } from '../../src/webhooks/index.js';
import { eventually, freePort } from '../support/ports.js';
import { removeTempDirs, tempDir } from '../support/temp-dirs.js';
import { reportFigures, sized } from './support/report.js';
import { startAnsweringService, type AnsweringService } from './support/answering-service.js';
import { cli, deliver, delivery, eventLineOffset, fileHashes, Processes, startServe, stop, STORE_FULFILLMENT, type CliResult } from './support/store-processes.js';

// Damaged store files, through the real processes: a real `serve` fills an embedded store from
// signed deliveries; the files are then cut, zeroed or filled up; `serve`, `events list`,
// `store check` and `store recover` run as their own processes on them.

const processes = new Processes();
// serve confirms events with the service: one that knows every payment, as just created.
let service: AnsweringService;
beforeAll(async () => {
  service = await startAnsweringService();
});
afterEach(() => processes.stopAll());
afterAll(async () => {
  await processes.stopAll();
  await service.close();
  await removeTempDirs();
});

const secret = newWebhookSecret();
const envFor = (storeDir: string) => ({ ...service.env, CHECKOUT_STORE: `file:${storeDir}`, CHECKOUT_WEBHOOK_SECRET: secret, CHECKOUT_HANDLERS: STORE_FULFILLMENT, LOG_LEVEL: 'warn' });

async function run(args: string[], storeDir: string, cwd: string): Promise<CliResult> {
  return cli(processes, args, { cwd, env: envFor(storeDir) });
}

async function eventIds(storeDir: string, cwd: string): Promise<string[]> {
  const result = await run(['events', 'list', '--json', '--limit', '100000'], storeDir, cwd);
  expect(result.code, result.stderr).toBe(0);
  return (JSON.parse(result.stdout) as EventRecord[]).map((event) => event.id).sort();
}

describe('damaged store files (real serve, events list, store check and recover processes)', () => {
  const early = Array.from({ length: 10 }, (_, i) => `evt_early_${i}`);
  // Large enough together (over 4 MiB, twice: body and stored payment) that serve compacts.
  const big = Array.from({ length: sized('FAULTS_STORE_BIG', 75) }, (_, i) => `evt_big_${i}`);
  const late = Array.from({ length: 20 }, (_, i) => `evt_late_${i}`);
  const all = [...early, ...big, ...late];
  let cwd: string;
  let base: string;
  /** The journal segment serve replays and appends to (after its compactions). */
  let current: string;

  beforeAll(async () => {
    cwd = await tempDir('ck-faults-shop-');
    base = join(await tempDir('ck-faults-base-'), 'store');
    const port = await freePort();
    const serve = await startServe(processes, port, { cwd, env: envFor(base) });
    // One at a time: the journal then holds the events in this order.
    for (const id of early) expect((await deliver(port, secret, id, delivery(id).body)).status).toBe(200);
    for (const id of big) expect((await deliver(port, secret, id, delivery(id, 60_000).body)).status).toBe(200);
    // serve compacts at the pause after a run of deliveries (not amid them): wait for it, so that
    // the late events go to the segment after the seal.
    await eventually(async () => ((await readFile(join(base, 'snapshot.json'), 'utf8').catch(() => '')) ? true : undefined), 30_000, 100);
    for (const id of late) expect((await deliver(port, secret, id, delivery(id).body)).status).toBe(200);
    await eventually(async () => {
      const result = await run(['events', 'list', '--json', '--status', 'pending', '--limit', '100000'], base, cwd);
      return result.code === 0 && JSON.parse(result.stdout).length === 0 ? true : undefined;
    }, 60_000, 500);
    expect(await stop(serve.child)).toBe(0);
    const { journalGeneration } = JSON.parse(await readFile(join(base, 'snapshot.json'), 'utf8')) as { journalGeneration: number };
    expect(journalGeneration).toBeGreaterThan(0);
    current = `journal-${journalGeneration}.jsonl`;
    // The late events are all in the current segment, where the damage goes.
    const segment = await readFile(join(base, current));
    for (const id of late) expect(eventLineOffset(segment, id), id).toBeGreaterThanOrEqual(0);
    expect(await eventIds(base, cwd)).toEqual([...all].sort());
  }, 180_000);

  /** A copy of the filled store to damage. */
  async function copyOfBase(): Promise<string> {
    const dir = join(await tempDir('ck-faults-damaged-'), 'store');
    await cp(base, dir, { recursive: true });
    return dir;
  }

  /**
   * serve and a reader refuse to open the damaged store with one clear line naming the file, and
   * change no file; store check names the damage; store recover brings back what was before the
   * damage and keeps a copy; serve starts again and accepts a delivery.
   */
  async function refusedThenRecovered(scenario: string, dir: string, expectations: { refusal: RegExp; problem: RegExp; file: string; kept: string[] }) {
    const hashes = await fileHashes(dir);
    const port = await freePort();
    const refused = processes.start(['serve', '--port', String(port)], { cwd, env: envFor(dir) });
    let refusedErr = '';
    refused.stderr?.on('data', (chunk: Buffer) => (refusedErr += chunk.toString()));
    const refusedCode = await new Promise((resolve) => refused.once('exit', resolve));
    expect(refusedCode).toBe(1);
    expect(refusedErr).toMatch(expectations.refusal);
    expect(refusedErr.trim().split('\n')).toHaveLength(1);
    const reader = await run(['events', 'list', '--json'], dir, cwd);
    expect(reader.code).toBe(1);
    expect(reader.stderr).toMatch(expectations.refusal);
    expect(await fileHashes(dir)).toEqual(hashes);

    const check = await run(['store', 'check'], dir, cwd);
    expect(check.code).toBe(1);
    const problems = check.stdout.split('\n').filter((line) => line.startsWith('damage: '));
    expect(problems).toEqual([expect.stringMatching(expectations.problem)]);
    expect(await fileHashes(dir)).toEqual(hashes);

    const started = performance.now();
    const recover = await run(['store', 'recover', '--json'], dir, cwd);
    const recoverMs = performance.now() - started;
    expect(recover.code, recover.stderr).toBe(0);
    const result = JSON.parse(recover.stdout) as { changed: boolean; backup: string; opens: boolean; dropped: { lines: number; bytes: number; events: number; eventIds: string[] }; keptEvents: number };
    // Recover's own check afterwards: nothing left to report.
    expect(result).toMatchObject({ changed: true, opens: true, keptEvents: expectations.kept.length, after: { status: 'healthy', problems: [] } });
    // The copy holds the damaged file as it was.
    expect((await fileHashes(result.backup))[expectations.file]).toBe(hashes[expectations.file]);
    expect(await eventIds(dir, cwd)).toEqual([...expectations.kept].sort());

    const serve = await startServe(processes, port, { cwd, env: envFor(dir) });
    const next = delivery(`evt_after_${scenario}`);
    expect((await deliver(port, secret, next.id, next.body)).status).toBe(200);
    expect(await stop(serve.child)).toBe(0);
    expect(await eventIds(dir, cwd)).toEqual([...expectations.kept, next.id].sort());
    reportFigures(`store-files ${scenario}`, {
      events: all.length,
      kept: expectations.kept.length,
      droppedEvents: result.dropped.events,
      droppedLines: result.dropped.lines,
      droppedBytes: result.dropped.bytes,
      startRefused: true,
      filesUnchanged: true,
      recoverMs: Math.round(recoverMs),
    });
    return result;
  }

  it('a journal cut in the middle of a line (torn tail): check names it, serve opens without it, keeps every event before it and cuts it on its first write', async () => {
    const dir = await copyOfBase();
    const journal = join(dir, current);
    const bytes = await readFile(journal);
    const line = eventLineOffset(bytes, 'evt_late_15');
    expect(line).toBeGreaterThan(0);
    await writeFile(journal, bytes.subarray(0, line + 120));

    const check = await run(['store', 'check', '--json'], dir, cwd);
    expect(check.code).toBe(0);
    expect(JSON.parse(check.stdout)).toMatchObject({ status: 'warnings', opens: true, problems: [{ kind: 'torn-tail', file: current, offset: line, bytes: 120 }] });

    const port = await freePort();
    const serve = await startServe(processes, port, { cwd, env: envFor(dir) });
    const next = delivery('evt_after_torn');
    expect((await deliver(port, secret, next.id, next.body)).status).toBe(200);
    expect(await stop(serve.child)).toBe(0);
    expect(serve.stderr()).toMatch(/unfinished last line/);
    const kept = all.slice(0, all.indexOf('evt_late_15'));
    expect(await eventIds(dir, cwd)).toEqual([...kept, next.id].sort());
    const after = await readFile(journal);
    expect(after.subarray(0, line)).toEqual(bytes.subarray(0, line));
    expect(after.at(-1)).toBe(10);
    const recheck = await run(['store', 'check', '--json'], dir, cwd);
    expect(JSON.parse(recheck.stdout)).toMatchObject({ status: 'healthy' });
    // Nothing left to recover: recover leaves the healthy store alone.
    const hashes = await fileHashes(dir);
    const recover = await run(['store', 'recover'], dir, cwd);
    expect(recover.stdout).toMatch(/healthy; no file was changed/);
    expect(await fileHashes(dir)).toEqual(hashes);
    reportFigures('store-files torn-tail', { events: all.length, kept: kept.length, tornBytes: 120, startRefused: false, tailCutByServe: true });
  });

  it('a NUL-filled region in the middle of the journal: refused untouched, then recovered up to the damaged line', async () => {
    const dir = await copyOfBase();
    const journal = join(dir, current);
    const bytes = await readFile(journal);
    const line = eventLineOffset(bytes, 'evt_late_8');
    bytes.fill(0, line + 40, line + 40 + 512);
    await writeFile(journal, bytes);
    const result = await refusedThenRecovered('nul-region', dir, {
      refusal: new RegExp(`^checkout-kit: Cannot read the store: .*${current.replace('.', '\\.')} has a damaged line at byte ${line} .*No file was changed`),
      problem: new RegExp(`^damage: ${current.replace('.', '\\.')}: damaged line at byte ${line} .*512 NUL bytes from byte 40 of the line.*the store will not open\\.$`),
      file: current,
      kept: all.slice(0, all.indexOf('evt_late_8')),
    });
    // The region may swallow the next event line too; every later event is reported as dropped.
    expect(result.dropped.eventIds).toEqual(expect.arrayContaining(late.slice(10)));
    expect(result.dropped.events).toBeGreaterThanOrEqual(late.length - 10);
  });

  it('a half-written last line (its second half NUL, newline in place): refused untouched, then recovered without that line only', async () => {
    const dir = await copyOfBase();
    const journal = join(dir, current);
    const bytes = await readFile(journal);
    const last = bytes.lastIndexOf(10, bytes.length - 2) + 1;
    const half = last + Math.floor((bytes.length - 1 - last) / 2);
    bytes.fill(0, half, bytes.length - 1);
    await writeFile(journal, bytes);
    const result = await refusedThenRecovered('half-written-last-line', dir, {
      refusal: new RegExp(`${current.replace('.', '\\.')} has a damaged line at byte ${last} `),
      problem: new RegExp(`^damage: ${current.replace('.', '\\.')}: damaged line at byte ${last} .*NUL bytes.*the store will not open\\.$`),
      file: current,
      kept: all,
    });
    expect(result.dropped).toMatchObject({ lines: 1, bytes: bytes.length - last });
  });

  it('a damaged snapshot: refused untouched, then rebuilt from the journals with nothing lost', async () => {
    const dir = await copyOfBase();
    const snapshot = join(dir, 'snapshot.json');
    const bytes = await readFile(snapshot);
    bytes.fill(0, 64, Math.min(bytes.length, 64 + 4096));
    await writeFile(snapshot, bytes);
    const result = await refusedThenRecovered('damaged-snapshot', dir, {
      refusal: /^checkout-kit: Cannot open the store: .*snapshot\.json is damaged \(not valid JSON.*The file was left untouched/,
      problem: /^damage: snapshot\.json is damaged: .*NUL bytes.*the store will not open\.$/,
      file: 'snapshot.json',
      kept: all,
    });
    expect(result.dropped).toMatchObject({ lines: 0, events: 0 });
  });
});

/** Whether this machine lets us mount a tmpfs (root with CAP_SYS_ADMIN): probed once. */
function canMountTmpfs(): boolean {
  if (process.getuid?.() !== 0) return false;
  const probe = join(tmpdir(), `ck-tmpfs-probe-${process.pid}`);
  try {
    execFileSync('mkdir', ['-p', probe]);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', probe], { stdio: 'ignore' });
    execFileSync('umount', [probe], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  } finally {
    execFileSync('rm', ['-rf', probe]);
  }
}
const TMPFS = canMountTmpfs();
if (!TMPFS) console.log('FAULTS store-files full-disk: skipped: mounting a tmpfs needs root with CAP_SYS_ADMIN');

describe.skipIf(!TMPFS)('a full disk (a 512 KiB tmpfs under the store)', () => {
  let mountPoint: string;
  beforeAll(async () => {
    mountPoint = await tempDir('ck-faults-tmpfs-');
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=512k', 'tmpfs', mountPoint]);
  });
  afterAll(async () => {
    await processes.stopAll();
    execFileSync('umount', [mountPoint]);
  });

  /** Fill the file system up with one file: write until ENOSPC. */
  async function fillDisk(path: string): Promise<number> {
    const handle = await open(path, 'w');
    const chunk = Buffer.alloc(4096, 1);
    let written = 0;
    try {
      for (;;) written += (await handle.write(chunk)).bytesWritten;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
    } finally {
      await handle.close();
    }
    return written;
  }

  it('answers 503 store_unavailable while the disk is full, loses nothing it acknowledged, and accepts again once space is freed', async () => {
    const cwd = await tempDir('ck-faults-shop-');
    const dir = join(mountPoint, 'store');
    const port = await freePort();
    const serve = await startServe(processes, port, { cwd, env: envFor(dir) });
    const acked: string[] = [];
    for (let i = 0; i < 20; i++) {
      const { id, body } = delivery(`evt_disk_${i}`);
      expect((await deliver(port, secret, id, body)).status).toBe(200);
      acked.push(id);
    }
    await eventually(async () => {
      const result = await cli(processes, ['events', 'list', '--json', '--status', 'pending'], { cwd, env: envFor(dir) });
      return result.code === 0 && JSON.parse(result.stdout).length === 0 ? true : undefined;
    }, 30_000, 300);

    const filler = join(mountPoint, 'filler');
    const filled = await fillDisk(filler);
    expect((await statfs(mountPoint)).bavail).toBe(0);
    // Appends may still fit in the journal's last page (a refused append is cut back, freeing its
    // slack again): deliver until the store has refused three. Whatever got a 200 must be kept.
    const refused: Array<{ id: string; body: string }> = [];
    let accepted = 0;
    for (let i = 0; refused.length < 3 && i < 200; i++) {
      const next = delivery(`evt_full_${i}`);
      const answer = await deliver(port, secret, next.id, next.body);
      if (answer.status === 200) {
        acked.push(next.id);
        accepted += 1;
      } else {
        expect(answer).toEqual({ status: 503, body: { error: expect.objectContaining({ code: 'store_unavailable' }) } });
        refused.push(next);
      }
    }
    expect(refused).toHaveLength(3);
    // Another process still reads everything acknowledged, with the disk full.
    const whileFull = await cli(processes, ['events', 'list', '--json', '--limit', '1000'], { cwd, env: envFor(dir) });
    expect(whileFull.code, whileFull.stderr).toBe(0);
    expect((JSON.parse(whileFull.stdout) as EventRecord[]).map((event) => event.id).sort()).toEqual([...acked].sort());

    // Space comes back: the sender's retries are accepted; nothing acknowledged is missing.
    await unlink(filler);
    for (const { id, body } of refused) expect((await deliver(port, secret, id, body)).status).toBe(200);
    expect(await stop(serve.child)).toBe(0);
    const restarted = await startServe(processes, port, { cwd, env: envFor(dir) });
    expect(await stop(restarted.child)).toBe(0);
    const after = await cli(processes, ['events', 'list', '--json', '--limit', '1000'], { cwd, env: envFor(dir) });
    expect((JSON.parse(after.stdout) as EventRecord[]).map((event) => event.id).sort()).toEqual([...acked, ...refused.map((r) => r.id)].sort());
    const check = await cli(processes, ['store', 'check', '--json'], { cwd, env: envFor(dir) });
    expect(JSON.parse(check.stdout)).toMatchObject({ status: 'healthy' });
    reportFigures('store-files full-disk', { tmpfsKiB: 512, fillerBytes: filled, acceptedWhileFull: accepted, refused503: refused.length, acked: acked.length + refused.length, lost: 0 });
  });
});

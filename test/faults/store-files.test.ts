import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, open, readFile, stat, statfs, truncate, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../src/store/index.js';
import { newWebhookSecret } from '../../src/webhooks/index.js';
import { eventually, freePort } from '../support/ports.js';
import { removeTempDirs, tempDir } from '../support/temp-dirs.js';
import { reportFigures } from './support/report.js';
import { startAnsweringService, type AnsweringService } from './support/answering-service.js';
import { pageSize, storeFiles, tableLeafPageHolding } from './support/sqlite-file.js';
import { cli, deliver, delivery, Processes, startServe, stop, STORE_FULFILLMENT, type CliResult } from './support/store-processes.js';

// Damaged store files, through the real processes: a real `serve` fills an embedded store from
// signed deliveries while `store backup` copies it; the database file is then overwritten or cut,
// or its disk filled up; `serve`, `events list`, `store check` run as their own processes on it,
// and the backup is restored as the refusal says.
//
// Checked to fail on a copy of the repo: a receiver answering 200 when the store write failed
// fails the full-disk scenario (no delivery refused: what it acknowledged was not stored).

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
const envFor = (storeDir: string) => ({
  ...service.env,
  CHECKOUT_STORE: `file:${storeDir}`,
  CHECKOUT_WEBHOOK_SECRET: secret,
  CHECKOUT_HANDLERS: STORE_FULFILLMENT,
  LOG_LEVEL: 'warn',
});

async function run(args: string[], storeDir: string, cwd: string): Promise<CliResult> {
  return cli(processes, args, { cwd, env: envFor(storeDir) });
}

async function eventIds(storeDir: string, cwd: string): Promise<string[]> {
  const result = await run(['events', 'list', '--json', '--limit', '100000'], storeDir, cwd);
  expect(result.code, result.stderr).toBe(0);
  return (JSON.parse(result.stdout) as StoredEvent[]).map((event) => event.id).sort();
}

/** Until serve has dispatched every stored event (another process reads the runs). */
async function dispatched(storeDir: string, cwd: string): Promise<void> {
  await eventually(
    async () => {
      const result = await run(['events', 'list', '--json', '--status', 'pending', '--limit', '100000'], storeDir, cwd);
      return result.code === 0 && JSON.parse(result.stdout).length === 0 ? true : undefined;
    },
    60_000,
    300,
  );
}

/** One clear line: exit 1, a single stderr line naming the database file and calling it damaged, nothing on stdout. */
function expectRefused(result: { code: number | null; stdout: string; stderr: string }, file: string, what: string) {
  expect(result.code, `${what}: ${result.stderr}`).toBe(1);
  expect(result.stdout, what).toBe('');
  const lines = result.stderr.trim().split('\n');
  expect(lines, `${what} printed ${lines.length} lines`).toHaveLength(1);
  expect(lines[0], what).toContain(file);
  expect(lines[0], what).toMatch(/damaged/i);
  expect(lines[0], what).toMatch(/`checkout-kit store restore <file>`/);
}

describe('a damaged database file (real serve, events list, store check and store backup processes)', () => {
  const early = Array.from({ length: 40 }, (_, i) => `evt_early_${i}`);
  /** Every event acknowledged, in the order it was delivered (one at a time). */
  const all: string[] = [];
  let cwd: string;
  let base: string;
  let backup: string;
  /** What the backup holds. */
  let backedUp: string[];
  let whileBackingUp = 0;

  beforeAll(async () => {
    cwd = await tempDir('ck-faults-shop-');
    base = join(await tempDir('ck-faults-base-'), 'store');
    backup = join(await tempDir('ck-faults-backup-'), 'nightly', 'store-backup.sqlite');
    const port = await freePort();
    const serve = await startServe(processes, port, { cwd, env: envFor(base) });
    const send = async (id: string) => {
      expect((await deliver(port, secret, id, delivery(id).body)).status).toBe(200);
      all.push(id);
    };
    for (const id of early) await send(id);
    // The backup is taken online: deliveries go on, one at a time, until it is done (and 20 more).
    let backingUp = true;
    const backedUpResult = run(['store', 'backup', backup, '--json'], base, cwd).finally(() => (backingUp = false));
    for (let i = 0; backingUp || i < 20; i++) {
      await send(`evt_late_${i}`);
      if (backingUp) whileBackingUp += 1;
    }
    const result = await backedUpResult;
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ backup });
    await dispatched(base, cwd);
    expect(await stop(serve.child)).toBe(0);
    expect(await eventIds(base, cwd)).toEqual([...all].sort());
    // The backup restored alone (where no store was), as an operator would: it opens, checks healthy, and holds the
    // store as of one moment: every event acknowledged before it started, and then a prefix of
    // those delivered while it ran (one at a time, so a later one never without an earlier one).
    const probe = join(await tempDir('ck-faults-probe-'), 'store');
    await restore(probe);
    const check = await run(['store', 'check', '--json'], probe, cwd);
    expect(JSON.parse(check.stdout)).toMatchObject({ status: 'healthy' });
    backedUp = await eventIds(probe, cwd);
    expect(backedUp).toEqual(expect.arrayContaining(early));
    expect(all.filter((id) => backedUp.includes(id))).toEqual(all.slice(0, backedUp.length));
    reportFigures('store-files online backup', {
      ackedBefore: early.length,
      ackedWhileItRan: whileBackingUp,
      acked: all.length,
      inBackup: backedUp.length,
      backupHealthy: true,
    });
  }, 180_000);

  /** A copy of the filled store to damage. */
  async function copyOfBase(): Promise<string> {
    const dir = join(await tempDir('ck-faults-damaged-'), 'store');
    await cp(base, dir, { recursive: true });
    // serve checkpointed and removed its WAL on a clean stop: the database file is all there is.
    expect(existsSync(storeFiles(dir).wal)).toBe(false);
    return dir;
  }

  /** The real `store restore`, as the damaged store's message says: the damaged folder is moved aside as it is. */
  async function restore(dir: string, damaged?: Buffer): Promise<void> {
    const restored = await run(['store', 'restore', backup, '--json'], dir, cwd);
    expect(restored.code, restored.stderr).toBe(0);
    const { replaced } = JSON.parse(restored.stdout) as { replaced: string | null };
    if (damaged) expect((await readFile(storeFiles(replaced!).db)).equals(damaged)).toBe(true);
    else expect(replaced).toBeNull();
  }

  /**
   * serve, a reader and store check each refuse the damaged file with one clear line naming it,
   * and none of them changes it; then the backup is restored as the line says, serve starts again
   * and accepts a delivery, and the store checks healthy.
   */
  async function refusedThenRestored(scenario: string, dir: string, options: { serveRefuses: boolean; check: RegExp }) {
    const { db, wal } = storeFiles(dir);
    const damaged = await readFile(db);

    const port = await freePort();
    if (options.serveRefuses) {
      const refused = processes.start(['serve', '--port', String(port), '--host', '127.0.0.1'], { cwd, env: envFor(dir) });
      let stdout = '';
      let stderr = '';
      refused.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      refused.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const code = await new Promise<number | null>((resolve) => refused.once('exit', resolve));
      expectRefused({ code, stdout, stderr }, db, 'serve');
    }
    expectRefused(await run(['events', 'list', '--json', '--limit', '100000'], dir, cwd), db, 'events list');

    const check = await run(['store', 'check', '--json'], dir, cwd);
    expect(check.code, check.stderr).toBe(1);
    const report = JSON.parse(check.stdout) as { status: string; problems: string[] };
    expect(report.status).toBe('damaged');
    expect(report.problems.join('\n')).toMatch(options.check);
    const human = await run(['store', 'check'], dir, cwd);
    expect(human.code).toBe(1);
    expect(human.stdout).toMatch(/DAMAGED[\s\S]*`checkout-kit store restore <file>`/);

    // Refused untouched: the same bytes, and no WAL holding writes.
    expect((await readFile(db)).equals(damaged)).toBe(true);
    if (existsSync(wal)) expect((await stat(wal)).size).toBe(0);

    await restore(dir, damaged);
    const serve = await startServe(processes, port, { cwd, env: envFor(dir) });
    const next = delivery(`evt_after_${scenario}`);
    expect((await deliver(port, secret, next.id, next.body)).status).toBe(200);
    expect(await stop(serve.child)).toBe(0);
    expect(await eventIds(dir, cwd)).toEqual([...backedUp, next.id].sort());
    const recheck = await run(['store', 'check', '--json'], dir, cwd);
    expect(recheck.code, recheck.stderr).toBe(0);
    expect(JSON.parse(recheck.stdout)).toMatchObject({ status: 'healthy', problems: [] });
    reportFigures(`store-files ${scenario}`, {
      events: all.length,
      backedUp: backedUp.length,
      serveRefused: options.serveRefuses,
      readerRefused: true,
      checkDamaged: true,
      fileUnchanged: true,
      restoredAndAccepting: true,
    });
  }

  it('its header overwritten: serve, events list and store check refuse it untouched; the backup brings the store back', async () => {
    const dir = await copyOfBase();
    const { db } = storeFiles(dir);
    const bytes = await readFile(db);
    bytes.fill(0, 0, 100);
    await writeFile(db, bytes);
    await refusedThenRestored('header', dir, { serveRefuses: true, check: /not a database/i });
  });

  it('cut to half its length: refused untouched; the backup brings the store back', async () => {
    const dir = await copyOfBase();
    const { db } = storeFiles(dir);
    const size = (await stat(db)).size;
    await truncate(db, Math.floor(size / 2));
    await refusedThenRestored('cut', dir, { serveRefuses: true, check: /malformed|missing|page/i });
  });

  it('its schema page overwritten (read by every start): refused untouched; the backup brings the store back', async () => {
    const dir = await copyOfBase();
    const { db } = storeFiles(dir);
    const bytes = await readFile(db);
    // Page 1 after the file header: the b-tree of the schema (sqlite_schema), read on every open.
    bytes.fill(0xff, 100, pageSize(bytes));
    await writeFile(db, bytes);
    await refusedThenRestored('schema-page', dir, { serveRefuses: true, check: /malformed/i });
  });

  it('a page of event rows overwritten: store check finds it, a reader of every event refuses it; the backup brings the store back', async () => {
    const dir = await copyOfBase();
    const { db } = storeFiles(dir);
    const bytes = await readFile(db);
    const page = tableLeafPageHolding(bytes, `{"id":"evt_late_20",`);
    expect(page).toBeGreaterThan(1);
    const size = pageSize(bytes);
    bytes.fill(0xff, (page - 1) * size, page * size);
    await writeFile(db, bytes);
    // SQLite finds damage in the pages it reads: serve, which reads no event row to start, is not
    // asked to refuse it; store check reads every page.
    await refusedThenRestored('event-page', dir, { serveRefuses: false, check: /malformed|page/i });
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

/** Size of the tmpfs: room for the database and its WAL up to SQLite's automatic checkpoint (1000 pages, ~4 MiB). */
const TMPFS_MIB = 16;

describe.skipIf(!TMPFS)(`a full disk (a ${TMPFS_MIB} MiB tmpfs under the store)`, () => {
  let mountPoint: string;
  beforeAll(async () => {
    mountPoint = await tempDir('ck-faults-tmpfs-');
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${TMPFS_MIB}m`, 'tmpfs', mountPoint]);
  });
  afterAll(async () => {
    await processes.stopAll();
    execFileSync('umount', [mountPoint]);
  });

  /** Fill the file system up with one file: write until ENOSPC. */
  async function fillDisk(path: string): Promise<number> {
    const handle = await open(path, 'w');
    const chunk = Buffer.alloc(64 * 1024, 1);
    let written = 0;
    try {
      for (;;) written += (await handle.write(chunk)).bytesWritten;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
    } finally {
      await handle.close();
    }
    // The last bytes a chunk did not fit into.
    const tail = await open(path, 'a');
    try {
      for (;;) written += (await tail.write(Buffer.alloc(512, 1))).bytesWritten;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
    } finally {
      await tail.close();
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
    await dispatched(dir, cwd);

    const filler = join(mountPoint, 'filler');
    const filled = await fillDisk(filler);
    expect((await statfs(mountPoint)).bavail).toBe(0);
    // A commit may still fit where the WAL has room from before: deliver until the store has
    // refused three. Whatever got a 200 must be kept.
    const refused: Array<{ id: string; body: string }> = [];
    let accepted = 0;
    for (let i = 0; refused.length < 3 && i < 500; i++) {
      const next = delivery(`evt_full_${i}`, 2_000);
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
    expect((JSON.parse(whileFull.stdout) as StoredEvent[]).map((event) => event.id).sort()).toEqual([...acked].sort());
    expect(serve.stderr()).toMatch(/full/i);

    // Space comes back: the same serve accepts the sender's retries (its failed commits were rolled
    // back, nothing half-written stays), dispatches everything, and nothing acknowledged is missing.
    await unlink(filler);
    for (const { id, body } of refused) expect((await deliver(port, secret, id, body)).status).toBe(200);
    await dispatched(dir, cwd);
    expect(await stop(serve.child)).toBe(0);
    const restarted = await startServe(processes, port, { cwd, env: envFor(dir) });
    expect(await stop(restarted.child)).toBe(0);
    const after = await cli(processes, ['events', 'list', '--json', '--limit', '1000'], { cwd, env: envFor(dir) });
    expect((JSON.parse(after.stdout) as StoredEvent[]).map((event) => event.id).sort()).toEqual([...acked, ...refused.map((r) => r.id)].sort());
    const check = await cli(processes, ['store', 'check', '--json'], { cwd, env: envFor(dir) });
    expect(check.code, check.stderr).toBe(0);
    expect(JSON.parse(check.stdout)).toMatchObject({ status: 'healthy' });
    reportFigures('store-files full-disk', {
      tmpfsMiB: TMPFS_MIB,
      fillerBytes: filled,
      acceptedWhileFull: accepted,
      refused503: refused.length,
      acked: acked.length + refused.length,
      lost: 0,
    });
  });
});

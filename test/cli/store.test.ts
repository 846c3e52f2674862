import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { chmod, lstat, mkdir, open, readdir, readFile, rename, stat, symlink, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createOnceKey, orderIdempotencyKey } from '../../src/domain/idempotency.js';
import { SqliteStore } from '../../src/store/index.js';
import { NOT_COPIED } from '../../src/store/sql/copy.js';
import { loadDriver } from '../../src/store/sqlite/driver.js';
import { execCli, runCli, spawnCli, stopProcess, terminateAll, TSX_LOADER, waitForLine } from '../support/cli.js';
import { eventually, freePort } from '../support/ports.js';
import { removeTempDirs, tempDir } from '../support/temp-dirs.js';
import { sampleEvent } from '../store/fixtures/sample-event.js';
import { DATABASE_URL, randomSchema } from '../store/postgres/test-database.js';

afterEach(removeTempDirs);

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const PAUSE_BEFORE_REPLACING = pathToFileURL(join(REPO, 'test/cli/fixtures/pause-before-replacing.mjs')).href;

/** A shop folder with an embedded store at `.checkout-kit`: `count` events, one dispatched, a paid payment, a checkout, a timeline entry, a dead letter, a partner tenant and its sealed credentials. */
async function shop(count: number) {
  const cwd = await tempDir('ck-store-cli-');
  const dir = join(cwd, '.checkout-kit');
  const store = new SqliteStore({ dir });
  await store.open();
  await Promise.all(Array.from({ length: count }, (_, i) => store.insertEvent(sampleEvent(`evt_${i}`))));
  if (count > 0) {
    await store.claimRun('event:evt_0', { owner: 'w', leaseMs: 60_000 });
    await store.completeRun('event:evt_0', 'w');
  }
  await store.updateResource({ kind: 'payment', id: 'pay_1', orderId: 'A-1001', outcome: 'paid', source: 'webhook', snapshot: { id: 'pay_1' } });
  await store.enqueueRun({ key: 'payment:pay_1:paid', kind: 'fulfillment', data: { id: 'pay_1' } });
  await store.putCheckoutAttempt({ orderId: 'A-1001', kind: 'payment', idempotencyKey: 'k', requestHash: 'h' });
  await store.appendActivity({ subject: 'payment:pay_1', kind: 'news', data: { outcome: 'paid' } });
  await store.insertDeadLetter({ receivedAt: new Date().toISOString(), reason: 'unparsable', body: 'x', headers: { a: 'b' } });
  await store.putTenantMerchant({ tenantId: 'shop-7', environment: 'test', idempotencyKey: 'k7', requestHash: 'h7', name: 'Shop 7', email: 'o@shop7.test' });
  await store.putTenantCredentials({ tenantId: 'shop-7', environment: 'test', sealed: 'sealed-v1.abc', keyId: 'key-1' });
  await store.close();
  return { cwd, dir, file: join(dir, 'store.sqlite'), env: { CHECKOUT_STORE: 'file:.checkout-kit' } };
}

/** Overwrite pages of the store's file past the header: SQLite's own check finds the damage. */
async function damage(file: string): Promise<void> {
  const handle = await open(file, 'r+');
  const { size } = await handle.stat();
  await handle.write(Buffer.alloc(Math.min(8192, size - 8192), 0x5a), 0, undefined, 8192);
  await handle.close();
}

describe('checkout-kit store check', () => {
  it('exits 0 and says healthy for a sound store', async () => {
    const { cwd, env } = await shop(3);
    const result = await runCli(['store', 'check'], { cwd, env });
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toMatch(/^store .*\.checkout-kit: healthy\n$/);
  });

  it('exits 1 for a damaged file and says what to do; serve and the read commands refuse it in one line and leave it untouched', async () => {
    const { cwd, env, file } = await shop(200);
    await damage(file);
    const damaged = await readFile(file);
    const check = await runCli(['store', 'check'], { cwd, env });
    expect(check.code).toBe(1);
    expect(check.stdout + check.stderr).toMatch(/DAMAGED|damaged/);
    const list = await runCli(['events', 'list'], { cwd, env });
    expect(list.code).toBe(1);
    expect(list.stderr.trim().split('\n')).toHaveLength(1);
    expect(list.stderr).toMatch(/store .*store\.sqlite is damaged .*Restore the latest backup \(`checkout-kit store restore <file>`\)/);
    expect(await readFile(file)).toEqual(damaged);
  });

  it('store backup of a damaged store writes no backup and replaces none: one line, exit 1', async () => {
    const { cwd, env, file } = await shop(200);
    await damage(file);
    await writeFile(join(cwd, 'good.sqlite'), 'the last good backup');
    const result = await runCli(['store', 'backup', 'good.sqlite', '--force'], { cwd, env });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^checkout-kit: The store .*store\.sqlite is damaged \(.*\): no backup was written, and no file at .*good\.sqlite was replaced\./,
    );
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(await readFile(join(cwd, 'good.sqlite'), 'utf8')).toBe('the last good backup');
    expect((await readdir(cwd)).filter((name) => name.includes('partial'))).toEqual([]);
    // store check lists SQLite's findings a line each, at most 20 of them.
    const check = await runCli(['store', 'check', '--json'], { cwd, env });
    const problems = (JSON.parse(check.stdout) as { problems: string[] }).problems;
    expect(problems.length).toBeGreaterThan(0);
    expect(problems.every((line) => !line.includes('\n'))).toBe(true);
    expect((await runCli(['store', 'check'], { cwd, env })).stdout.split('\n').length).toBeLessThanOrEqual(23);
  });

  it('an empty store.sqlite (a restore cut short) is no store: check, backup and the read commands refuse it, and nothing turns it into one', async () => {
    const cwd = await tempDir('ck-store-cli-');
    await mkdir(join(cwd, '.checkout-kit'));
    await writeFile(join(cwd, '.checkout-kit', 'store.sqlite'), '');
    const env = { CHECKOUT_STORE: 'file:.checkout-kit' };
    for (const args of [
      ['store', 'check'],
      ['store', 'backup', 'b.sqlite'],
    ]) {
      expect(await runCli(args, { cwd, env })).toMatchObject({ code: 2, stderr: expect.stringMatching(/store\.sqlite is an empty file, not a store/) });
    }
    for (const args of [['events', 'list'], ['migrate']]) {
      expect(await runCli(args, { cwd, env })).toMatchObject({ code: 2, stderr: expect.stringMatching(/No store at /) });
    }
    expect((await readFile(join(cwd, '.checkout-kit', 'store.sqlite'))).length).toBe(0);
  });

  it('refuses a file that is not a store at all with one line naming it', async () => {
    const { cwd, env, file } = await shop(0);
    await writeFile(file, 'not a database, just some text that is long enough to be read as a header of something');
    const result = await runCli(['events', 'list'], { cwd, env });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^checkout-kit: The store .*store\.sqlite is damaged \(file is not a database\)\. The file was left untouched\./);
  });

  it('where no store is, like the reading commands: exit 2, one line, nothing created', async () => {
    const cwd = await tempDir('ck-store-cli-');
    for (const args of [
      ['store', 'check'],
      ['store', 'check', '--dir', 'elsewhere'],
      ['store', 'backup', 'b.sqlite'],
    ]) {
      const result = await runCli(args, { cwd, env: { CHECKOUT_STORE: 'file:nothing-here' } });
      expect([result.code, result.stdout], args.join(' ')).toEqual([2, '']);
      expect(result.stderr, args.join(' ')).toMatch(/^checkout-kit: No store at .*: nothing has been stored there yet\. Check the folder given/);
    }
    expect(await readdir(cwd)).toEqual([]);
  });

  it('is not applicable to PostgreSQL or memory stores: exit 2 with one line, no credentials', async () => {
    const cwd = await tempDir('ck-store-cli-');
    for (const [store, pattern] of [
      [
        'postgres://user:secret@127.0.0.1:5432/shop',
        /^checkout-kit: store check is for the embedded store \(CHECKOUT_STORE=file:<dir>\), not a postgres: store: use PostgreSQL's own tools/,
      ],
      ['memory:', /not a memory: store: it keeps nothing on disk/],
    ] as const) {
      const result = await runCli(['store', 'check'], { cwd, env: { CHECKOUT_STORE: store } });
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(pattern);
      expect(result.stderr).not.toContain('secret');
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
    }
  });

  it("names PostgreSQL's own tool for each command, on the store's schema", async () => {
    const cwd = await tempDir('ck-store-cli-');
    for (const [args, tool] of [
      [['store', 'check'], 'pg_amcheck'],
      [['store', 'backup', 'backup.sqlite'], 'pg_dump'],
      [['store', 'restore', 'backup.sqlite'], 'pg_restore'],
    ] as const) {
      for (const [store, schema] of [
        ['postgres://user:secret@127.0.0.1:5432/shop', 'checkout_kit'],
        ['postgres://user:secret@127.0.0.1:5432/shop?schema=ck', 'ck'],
      ] as const) {
        const result = await runCli([...args], { cwd, env: { CHECKOUT_STORE: store } });
        expect([result.code, result.stderr], `${args[1]} ${store}`).toEqual([
          2,
          `checkout-kit: store ${args[1]} is for the embedded store (CHECKOUT_STORE=file:<dir>), not a postgres: store: use PostgreSQL's own tools on the store's schema (${tool} --schema=${schema} …).\n`,
        ]);
      }
    }
  });

  it('refuses a store folder that does not exist, and does not create it', async () => {
    const cwd = await tempDir('ck-store-cli-');
    const result = await runCli(['store', 'check', '--dir', 'missing'], { cwd });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^checkout-kit: No store at .*missing/);
    expect(await readdir(cwd)).toEqual([]);
  });

  it('says a store path that is a file is not a folder, in one line, exit 2 as for a missing one, and leaves the file alone', async () => {
    const cwd = await tempDir('ck-store-cli-');
    await writeFile(join(cwd, 'not-a-folder'), 'mine');
    for (const store of ['file:not-a-folder', 'file:not-a-folder/store']) {
      const result = await runCli(['events', 'list'], { cwd, env: { CHECKOUT_STORE: store } });
      expect(result.code, store).toBe(2);
      expect(result.stderr, store).toBe(
        `checkout-kit: Cannot open the store ${join(cwd, store.slice('file:'.length))}: it (or a folder above it) is a file, not a folder. Point the store at a folder (CHECKOUT_STORE=file:<dir>).\n`,
      );
    }
    const checked = await runCli(['store', 'check', '--dir', 'not-a-folder'], { cwd });
    expect([checked.code, checked.stderr]).toEqual([
      2,
      expect.stringMatching(/^checkout-kit: Cannot open the store .*not-a-folder: it \(or a folder above it\) is a file/),
    ]);
    expect(await readFile(join(cwd, 'not-a-folder'), 'utf8')).toBe('mine');
  });
});

describe('checkout-kit store backup', () => {
  it('writes a copy that opens with everything in it, while the store stays usable', async () => {
    const { cwd, env, dir } = await shop(50);
    const result = await runCli(['store', 'backup', 'backup.sqlite'], { cwd, env });
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toContain('backed up to');
    // The backup is a store file: put it in a folder of its own and open it.
    const restored = join(cwd, 'restored');
    expect((await runCli(['store', 'backup', join(restored, 'store.sqlite')], { cwd, env: { CHECKOUT_STORE: `file:${dir}` } })).code).toBe(0);
    const copy = new SqliteStore({ dir: restored, readonly: true });
    expect((await copy.listEvents({ limit: 1000 })).length).toBe(50);
    expect(await copy.getResource('payment', 'pay_1')).toMatchObject({ outcome: 'paid', orderId: 'A-1001' });
    expect(copy.integrityCheck()).toEqual(['ok']);
    await copy.close();
  });
});

describe('checkout-kit store backup stopped midway', () => {
  const children: ChildProcess[] = [];
  afterEach(() => terminateAll(children.splice(0)));

  it.each([['SIGINT' as const], ['SIGTERM' as const]])(
    'by %s: ends by that signal saying so in one line, leaving nothing beside the last good backup, which stays as it was',
    async (signal) => {
      const { cwd, env } = await shop(2000);
      const backup = join(cwd, 'backups', 'store.sqlite');
      expect((await runCli(['store', 'backup', backup], { cwd, env })).code).toBe(0);
      const lastGood = await readFile(backup);
      const PAUSE_MID_BACKUP = pathToFileURL(join(REPO, 'test/cli/fixtures/pause-mid-backup.mjs')).href;
      const tonight = spawnCli(['store', 'backup', backup, '--force'], { cwd, env, stdin: 'pipe', preload: [PAUSE_MID_BACKUP] });
      children.push(tonight);
      let stderr = '';
      tonight.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const exit = new Promise<[number | null, NodeJS.Signals | null]>((resolve) => tonight.once('exit', (code, by) => resolve([code, by])));
      await waitForLine(tonight, /^paused$/m);
      expect((await readdir(join(cwd, 'backups'))).some((name) => name.startsWith('store.sqlite.partial-'))).toBe(true);
      tonight.kill(signal);
      tonight.stdin!.end('go\n');
      expect(await exit).toEqual([null, signal]);
      expect(stderr).toBe(`checkout-kit: store backup stopped (${signal}): no backup was written to ${backup}, and nothing there was replaced.\n`);
      expect(await readdir(join(cwd, 'backups'))).toEqual(['store.sqlite']);
      expect((await readFile(backup)).equals(lastGood)).toBe(true);
    },
  );

  it('by SIGKILL: the next backup to that file removes the partial copy it left, says so, and leaves that of a backup still running', async () => {
    const { cwd, env, dir } = await shop(2000);
    const backups = join(cwd, 'backups');
    const backup = join(backups, 'store.sqlite');
    const PAUSE_MID_BACKUP = pathToFileURL(join(REPO, 'test/cli/fixtures/pause-mid-backup.mjs')).href;
    const killed = spawnCli(['store', 'backup', backup], { cwd, env, stdin: 'pipe', preload: [PAUSE_MID_BACKUP] });
    children.push(killed);
    const gone = new Promise((resolve) => killed.once('exit', resolve));
    await waitForLine(killed, /^paused$/m);
    killed.kill('SIGKILL');
    await gone;
    const left = (await readdir(backups)).sort();
    expect(left).toContain(`store.sqlite.partial-${killed.pid}`);
    // A backup to the same file running now, in another process (this one): not to be touched.
    const running = join(backups, `store.sqlite.partial-${process.pid}`);
    await writeFile(running, 'a backup in progress');

    const next = await execCli(['store', 'backup', backup], { cwd, env });
    expect([next.code, next.stderr]).toEqual([0, '']);
    expect(next.stdout).toBe(`store ${dir}: backed up to ${backup}\n  removed what a backup killed midway had left beside it: ${left.join(', ')}\n`);
    expect((await readdir(backups)).sort()).toEqual(['store.sqlite', basename(running)]);
    expect(await readFile(running, 'utf8')).toBe('a backup in progress');
    const restored = join(cwd, 'restored');
    await mkdir(restored);
    await rename(backup, join(restored, 'store.sqlite'));
    const copy = new SqliteStore({ dir: restored, readonly: true });
    expect((await copy.listEvents({ limit: 10_000 })).length).toBe(2000);
    await copy.close();
  });
});

describe('checkout-kit store backup refuses to replace what it must not', () => {
  it("the store's own files, a folder, or (without --force) a file already there: exit 2, one line, nothing touched", async () => {
    const { cwd, env, dir } = await shop(5);
    const storeFile = join(dir, 'store.sqlite');
    const before = await readFile(storeFile);
    for (const [target, message] of [
      [storeFile, /^checkout-kit: The backup .*store\.sqlite would be in the store's own folder .*: write it elsewhere/],
      [`${storeFile}-wal`, /would be in the store's own folder/],
      [join(dir, 'nightly.sqlite'), /would be in the store's own folder/],
      [cwd, /^checkout-kit: The backup .* is not a file: name a file/],
      ['', /^checkout-kit: store backup takes the file to write/],
    ] as const) {
      const refused = await runCli(['store', 'backup', target], { cwd, env });
      expect([refused.code, refused.stdout], target).toEqual([2, '']);
      expect(refused.stderr, target).toMatch(message);
      expect(refused.stderr.trimEnd().split('\n'), target).toHaveLength(1);
    }
    expect((await readFile(storeFile)).equals(before)).toBe(true);

    await writeFile(join(cwd, 'elsewhere.sqlite'), 'not mine to replace');
    const existing = await runCli(['store', 'backup', 'elsewhere.sqlite'], { cwd, env });
    expect([existing.code, existing.stderr]).toEqual([
      2,
      `checkout-kit: The backup ${join(cwd, 'elsewhere.sqlite')} already exists: name a new file, or pass --force to replace it.\n`,
    ]);
    expect(await readFile(join(cwd, 'elsewhere.sqlite'), 'utf8')).toBe('not mine to replace');
    expect((await runCli(['store', 'backup', 'elsewhere.sqlite', '--force'], { cwd, env })).code).toBe(0);
    const restored = join(cwd, 'restored');
    await mkdir(restored);
    await rename(join(cwd, 'elsewhere.sqlite'), join(restored, 'store.sqlite'));
    const copy = new SqliteStore({ dir: restored, readonly: true });
    expect((await copy.listEvents({ limit: 100 })).length).toBe(5);
    await copy.close();
  });
});

describe('checkout-kit store copy', () => {
  async function counts(store: SqliteStore) {
    return {
      events: (await store.listEvents({ limit: 10_000 })).length,
      runs: await store.countRuns(),
      resources: (await store.listResources()).length,
      activity: (await store.listActivity({ subject: 'payment:pay_1' })).length,
      deadLetters: (await store.listDeadLetters()).length,
    };
  }

  it('copies an embedded store into another, everything kept, and a second run copies nothing again', async () => {
    const { cwd, env, dir } = await shop(120);
    const first = await runCli(['store', 'copy', '--to', 'file:moved', '--json'], { cwd, env });
    expect(first).toMatchObject({ code: 0, stderr: '' });
    const report = JSON.parse(first.stdout) as { complete: boolean; tables: Array<{ table: string; source: number; target: number; copied: number }> };
    expect(report.complete).toBe(true);
    expect(report.tables.find((row) => row.table === 'events')).toMatchObject({ source: 120, target: 120, copied: 120 });
    const again = await runCli(['store', 'copy', '--to', 'file:moved', '--json'], { cwd, env });
    expect(again.code).toBe(0);
    expect((JSON.parse(again.stdout) as typeof report).tables.every((row) => row.copied === 0)).toBe(true);
    const source = new SqliteStore({ dir, readonly: true });
    const target = new SqliteStore({ dir: join(cwd, 'moved'), readonly: true });
    expect(await counts(target)).toEqual(await counts(source));
    expect(await target.getRun('event:evt_0')).toEqual(await source.getRun('event:evt_0'));
    expect(await target.getResource('payment', 'pay_1')).toEqual(await source.getResource('payment', 'pay_1'));
    expect(await target.getCheckoutAttempt('A-1001')).toEqual(await source.getCheckoutAttempt('A-1001'));
    expect(await target.getEvent('evt_7')).toEqual(await source.getEvent('evt_7'));
    expect(await target.getTenantCredentials('shop-7', 'test')).toEqual(await source.getTenantCredentials('shop-7', 'test'));
    // Every table of the schema but the leases and the schema's own record, row for row, every column (`seq` is the target's own).
    const { rows: tables } = await source.database.query<{ name: string }>({ text: "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name" });
    expect(tables.map((row) => row.name).filter((name) => !(NOT_COPIED as readonly string[]).includes(name))).toEqual(
      report.tables.map((row) => row.table).sort(),
    );
    for (const { table } of report.tables) {
      const rows = async (store: SqliteStore) =>
        (await store.database.query<Record<string, unknown>>({ text: `SELECT * FROM ${table} ORDER BY 1, 2, 3` })).rows.map(({ seq: _seq, ...row }) => row);
      expect({ table, rows: await rows(target) }).toEqual({ table, rows: await rows(source) });
    }
    await Promise.all([source.close(), target.close()]);
  });

  it('a copy run again adds what is new, and reports what changed in the source since without overwriting it', async () => {
    const { cwd, env, dir } = await shop(3);
    expect((await runCli(['store', 'copy', '--to', 'file:moved'], { cwd, env })).code).toBe(0);
    // The source still in use after the first copy: a handler ran, a checkout went through, an event came.
    const source = new SqliteStore({ dir });
    await source.open();
    await source.claimRun('payment:pay_1:paid', { owner: 'w', leaseMs: 60_000 });
    await source.completeRun('payment:pay_1:paid', 'w', new Date(Date.now() + 1000));
    await source.completeCheckoutAttempt('A-1001', { resourceId: 'pay_1', checkoutUrl: 'https://pay.example/c/1' }, new Date(Date.now() + 1000));
    await source.insertEvent(sampleEvent('evt_late'));
    await source.appendActivity({ subject: 'payment:pay_1', kind: 'handler', data: { ok: true } }, new Date(Date.now() + 1000));
    await source.close();

    const again = await runCli(['store', 'copy', '--to', 'file:moved', '--json'], { cwd, env });
    expect(again.code).toBe(1);
    const report = JSON.parse(again.stdout) as { complete: boolean; tables: Array<{ table: string; copied: number; changed: number }> };
    expect(report.complete).toBe(false);
    const byTable = Object.fromEntries(report.tables.map((row) => [row.table, { copied: row.copied, changed: row.changed }]));
    expect(byTable).toMatchObject({
      events: { copied: 1, changed: 0 },
      runs: { copied: 1, changed: 1 },
      checkout_attempts: { copied: 0, changed: 1 },
      activity: { copied: 1, changed: 0 },
    });
    const human = await runCli(['store', 'copy', '--to', 'file:moved'], { cwd, env });
    expect(human.stdout).toMatch(/runs .* 0 copied now, 1 changed in the source since copied/);
    expect(human.stdout).toContain('Stop serve and cron on the source, then copy into an empty store.');
    // Nothing the target has was overwritten.
    const moved = new SqliteStore({ dir: join(cwd, 'moved'), readonly: true });
    expect(await moved.getRun('payment:pay_1:paid')).toMatchObject({ status: 'pending' });
    expect(await moved.getCheckoutAttempt('A-1001')).toMatchObject({ status: 'sending' });
    expect(await moved.getEvent('evt_late')).toBeDefined();
    expect((await moved.listActivity({ subject: 'payment:pay_1' })).map((entry) => entry.kind)).toEqual(['handler', 'news']);
    await moved.close();
  });

  it('refuses a source another process has open, before it copies anything, and a --to naming no store before that', async () => {
    const { cwd, env } = await shop(3);
    const consoleProcess = spawnCli(['console', '--port', String(await freePort())], { cwd, env: { ...env, LOG_LEVEL: 'warn' } });
    try {
      await waitForLine(consoleProcess, /checkout-kit console on/);
      const refused = await execCli(['store', 'copy', '--to', 'file:moved'], { cwd, env });
      expect(refused).toMatchObject({ code: 1, stdout: '' });
      expect(refused.stderr).toMatch(
        /^checkout-kit: The store .*\.checkout-kit is open in another process \(serve, a cron reconcile, the console…\): stop them, then copy\. Nothing was copied\.\n$/,
      );
      expect(await readdir(cwd)).not.toContain('moved');
      // A --to that names no store is said first: the operator learns it before stopping what holds the source.
      expect(await execCli(['store', 'copy', '--to', 'moved'], { cwd, env })).toEqual({
        code: 2,
        stdout: '',
        stderr: 'checkout-kit: store copy: --to "moved" is a bare path: write file:moved for an embedded store in that folder, or give postgres://….\n',
      });
      expect(await execCli(['store', 'copy', '--to', 'mysql://u:secret@db/shop'], { cwd, env })).toEqual({
        code: 2,
        stdout: '',
        stderr: 'checkout-kit: store copy: --to "mysql:…" is none of file:<dir> or postgres://….\n',
      });
    } finally {
      await stopProcess(consoleProcess);
    }
    expect((await execCli(['store', 'copy', '--to', 'file:moved'], { cwd, env })).code).toBe(0);
  });

  it('a store under ~ (CHECKOUT_STORE in .env, store copy --to) is refused with the whole path to write, making no folder named ~', async () => {
    const { cwd, env } = await shop(1);
    const home = { HOME: '/home/shop' };
    expect(await execCli(['store', 'copy', '--to', 'file:~/moved'], { cwd, env: { ...env, ...home } })).toEqual({
      code: 2,
      stdout: '',
      stderr: 'checkout-kit: --to "file:~/moved" starts with ~, which nothing expands here: write the whole path, e.g. file:/home/shop/moved.\n',
    });
    await writeFile(join(cwd, '.env'), 'CHECKOUT_STORE=file:~/shop-data\n');
    const message = 'CHECKOUT_STORE "file:~/shop-data" starts with ~, which nothing expands here: write the whole path, e.g. file:/home/shop/shop-data.';
    expect(await execCli(['events', 'list'], { cwd, env: home })).toEqual({ code: 2, stdout: '', stderr: `checkout-kit: ${message}\n` });
    const doctor = await execCli(['doctor', '--json'], { cwd, env: home });
    expect(JSON.parse(doctor.stdout)).toContainEqual({ check: 'configuration', result: 'fail', detail: message });
    expect(await readdir(cwd)).not.toContain('~');
  });

  it('refuses a target written to since it was copied (a store in use), touching nothing', async () => {
    const { cwd, env } = await shop(3);
    expect((await runCli(['store', 'copy', '--to', 'file:moved'], { cwd, env })).code).toBe(0);
    const live = new SqliteStore({ dir: join(cwd, 'moved') });
    await live.open();
    await live.insertEvent(sampleEvent('evt_after_the_switch'));
    await live.close();
    const result = await runCli(['store', 'copy', '--to', 'file:moved'], { cwd, env });
    expect(result).toMatchObject({ code: 2, stdout: '' });
    expect(result.stderr).toMatch(
      /holds events the source does not \(evt_after_the_switch\): it is another store, or one written to since it was copied\. Nothing was copied/,
    );
  });

  it("refuses a target holding another store's rows, touching neither", async () => {
    const { cwd, env } = await shop(3);
    const other = new SqliteStore({ dir: join(cwd, 'other') });
    await other.open();
    await other.insertEvent(sampleEvent('evt_of_another_shop'));
    await other.putCheckoutAttempt({ orderId: 'A-1001', kind: 'payment', idempotencyKey: 'theirs', requestHash: 'theirs' });
    await other.close();
    const result = await runCli(['store', 'copy', '--to', 'file:other'], { cwd, env });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /^checkout-kit: The target .* holds events the source does not \(evt_of_another_shop\): it is another store, or one written to since it was copied\. Nothing was copied/,
    );
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    const untouched = new SqliteStore({ dir: join(cwd, 'other'), readonly: true });
    expect(await untouched.countRuns()).toBe(1);
    expect(await untouched.getCheckoutAttempt('A-1001')).toMatchObject({ idempotencyKey: 'theirs' });
    await untouched.close();
  });

  it.each([
    [
      'checkout_attempts',
      'A-1001, try 1',
      async (other: SqliteStore) => {
        await other.putCheckoutAttempt({ orderId: 'A-1001', kind: 'payment', idempotencyKey: 'theirs', requestHash: 'theirs' });
        await other.releaseCheckoutAttempt('A-1001', 1);
      },
    ],
    [
      'tenant_merchants',
      'shop-7 test, try 1',
      async (other: SqliteStore) => {
        await other.putTenantMerchant({
          tenantId: 'shop-7',
          environment: 'test',
          idempotencyKey: 'theirs',
          requestHash: 'theirs',
          name: 'Theirs',
          email: 'o@theirs.test',
        });
      },
    ],
  ])("refuses a target whose only rows are another shop's %s under the shop's own ids, touching neither", async (table, id, write) => {
    const { cwd, env } = await shop(3);
    const other = new SqliteStore({ dir: join(cwd, 'other') });
    await other.open();
    await write(other);
    await other.close();
    await expectRefusedUntouched(cwd, env, table, id, ['runs', 'resources', 'checkout_attempts', 'tenant_merchants']);
  });

  /** `store copy --to file:other` refused for the other shop's row in `table` (`id`): nothing copied, `other` as it was (one row, in `table`). */
  async function expectRefusedUntouched(cwd: string, env: NodeJS.ProcessEnv, table: string, id: string, tables: readonly string[]) {
    const result = await runCli(['store', 'copy', '--to', 'file:other'], { cwd, env });
    expect(result).toMatchObject({ code: 2, stdout: '' });
    expect(result.stderr).toMatch(
      new RegExp(
        `^checkout-kit: The target .* holds ${table} the source does not \\(${id}\\): it is another store, or one written to since it was copied\\. Nothing was copied`,
      ),
    );
    const untouched = new SqliteStore({ dir: join(cwd, 'other'), readonly: true });
    expect((await untouched.listEvents({ limit: 10 })).length).toBe(0);
    for (const name of tables) {
      const { rows } = await untouched.database.query<{ n: number }>({ text: `SELECT count(*) AS n FROM ${name}` });
      expect({ name, n: Number(rows[0]!.n) }).toEqual({ name, n: name === table ? 1 : 0 });
    }
    await untouched.close();
  }

  /** The shop's order A-1001 and tenant shop-7, each refused by the service at its first try and tried again under the next number. */
  async function triedAgain(dir: string) {
    const source = new SqliteStore({ dir });
    await source.open();
    await source.releaseCheckoutAttempt('A-1001', 1);
    await source.putCheckoutAttempt({
      orderId: 'A-1001',
      kind: 'payment',
      number: 2,
      idempotencyKey: orderIdempotencyKey('payment', 'A-1001', 2),
      requestHash: 'h2',
    });
    await source.releaseTenantMerchant('shop-7', 'test', 1);
    await source.putTenantMerchant({
      tenantId: 'shop-7',
      environment: 'test',
      number: 2,
      idempotencyKey: createOnceKey('merchant', 'shop-7', 2),
      requestHash: 'h7-2',
      name: 'Shop 7',
      email: 'o@shop7.test',
    });
    await source.close();
  }

  const anHourAgo = () => new Date(Date.now() - 3_600_000);
  const theirFirstCheckout = { orderId: 'A-1001', kind: 'payment', idempotencyKey: orderIdempotencyKey('payment', 'A-1001'), requestHash: 'theirs' } as const;
  it.each([
    [
      'checkout_attempts',
      'A-1001, try 1',
      'under a key of its own',
      (other: SqliteStore) => other.putCheckoutAttempt({ ...theirFirstCheckout, idempotencyKey: 'theirs' }, anHourAgo()),
    ],
    [
      'checkout_attempts',
      'A-1001, try 1',
      'created (a try the source could never have followed)',
      async (other: SqliteStore) => {
        await other.putCheckoutAttempt(theirFirstCheckout, anHourAgo());
        await other.completeCheckoutAttempt('A-1001', { resourceId: 'pay_theirs', checkoutUrl: 'https://pay.example/c/theirs' }, anHourAgo());
      },
    ],
    [
      'checkout_attempts',
      'A-1001, try 1',
      "begun after the source's later try",
      (other: SqliteStore) => other.putCheckoutAttempt(theirFirstCheckout, new Date(Date.now() + 3_600_000)),
    ],
    [
      'tenant_merchants',
      'shop-7 test, try 1',
      'under a key of its own',
      (other: SqliteStore) =>
        other.putTenantMerchant(
          { tenantId: 'shop-7', environment: 'test', idempotencyKey: 'theirs', requestHash: 'theirs', name: 'Theirs', email: 'o@theirs.test' },
          anHourAgo(),
        ),
    ],
  ])("refuses another shop's %s (%s) whose id the source has since tried again under a later number: %s, touching neither", async (table, id, _how, write) => {
    const { cwd, env, dir } = await shop(3);
    await triedAgain(dir);
    const other = new SqliteStore({ dir: join(cwd, 'other') });
    await other.open();
    await write(other);
    await other.close();
    await expectRefusedUntouched(cwd, env, table, id, ['checkout_attempts', 'tenant_merchants']);
  });

  it('takes a target copied before the source tried an order and a tenant again under a later number, reporting them as changed since', async () => {
    const { cwd, env, dir } = await shop(3);
    // Tried as checkout-kit tries them (the fixture's A-1001 and shop-7 carry keys of their own).
    const source = new SqliteStore({ dir });
    await source.open();
    await source.database.query({ text: `UPDATE checkout_attempts SET idempotency_key = $1`, values: [orderIdempotencyKey('payment', 'A-1001')] });
    await source.database.query({ text: `UPDATE tenant_merchants SET idempotency_key = $1`, values: [createOnceKey('merchant', 'shop-7')] });
    await source.close();
    expect((await runCli(['store', 'copy', '--to', 'file:moved'], { cwd, env })).code).toBe(0);
    await triedAgain(dir);
    const again = await runCli(['store', 'copy', '--to', 'file:moved', '--json'], { cwd, env });
    expect([again.code, again.stderr]).toEqual([1, '']);
    const report = JSON.parse(again.stdout) as { complete: boolean; tables: Array<{ table: string; copied: number; changed: number }> };
    expect(report.complete).toBe(false);
    expect(report.tables.filter((row) => row.changed > 0).map(({ table, changed }) => ({ table, changed }))).toEqual([
      { table: 'checkout_attempts', changed: 1 },
      { table: 'tenant_merchants', changed: 1 },
    ]);
  });

  it.each([['file:./.checkout-kit/'], ['file:.checkout-kit/../.checkout-kit']])(
    'refuses the source itself however it is spelled (%s), and a memory: target',
    async (to) => {
      const { cwd, env } = await shop(1);
      expect(await runCli(['store', 'copy', '--to', to], { cwd, env })).toMatchObject({
        code: 2,
        stderr: expect.stringMatching(/names the source store itself/),
      });
      expect(await runCli(['store', 'copy', '--to', 'memory:'], { cwd, env })).toMatchObject({
        code: 2,
        stderr: expect.stringMatching(/memory: store keeps nothing/),
      });
    },
  );

  it('run again after the move (CHECKOUT_STORE now names the target), says the source came from CHECKOUT_STORE and how to name the embedded store', async () => {
    const cwd = await tempDir('ck-store-copy-again-');
    const moved = 'postgres://shop@db.invalid:5432/shop';
    const result = await runCli(['store', 'copy', '--to', moved], { cwd, env: { CHECKOUT_STORE: moved } });
    expect(result).toMatchObject({
      code: 2,
      stderr:
        'checkout-kit: store copy: --to names the source store itself (CHECKOUT_STORE, the source when --from is not given); ' +
        'to copy the embedded store again, name it: --from file:.checkout-kit. Give another store.\n',
    });
    // With --from given, the source is no mystery.
    expect((await runCli(['store', 'copy', '--from', moved, '--to', moved], { cwd })).stderr).toBe(
      'checkout-kit: store copy: --to names the source store itself. Give another store.\n',
    );
  });

  it('names the flag a store came from (--from, --to) in what to check, CHECKOUT_STORE only where it came from there', async () => {
    const { cwd, env } = await shop(1);
    await writeFile(join(cwd, 'a-file'), 'mine');
    const cases: Array<[string[], NodeJS.ProcessEnv, RegExp]> = [
      [
        ['--from', 'file:nowhere', '--to', 'file:moved'],
        env,
        /^checkout-kit: No store at .*nowhere \(--from=file:nowhere\): nothing was ever stored there\. Check --from;/,
      ],
      [
        ['--to', 'file:a-file'],
        env,
        /^checkout-kit: Cannot open the store .*a-file: it \(or a folder above it\) is a file, not a folder\. Point the store at a folder \(--to=file:<dir>\)\.\n$/,
      ],
      [
        ['--to', 'postgres://checkout@127.0.0.1:1/shop'],
        env,
        /^checkout-kit: Could not open the store PostgreSQL 127\.0\.0\.1:1\/shop, schema checkout_kit: .*\. Check --to and that the server accepts connections\.\n$/,
      ],
      [
        ['--to', 'file:moved'],
        { CHECKOUT_STORE: 'file:nowhere' },
        /^checkout-kit: No store at .*nowhere \(CHECKOUT_STORE=file:nowhere\): nothing was ever stored there\. Check CHECKOUT_STORE;/,
      ],
    ];
    for (const [args, caseEnv, message] of cases) {
      const result = await runCli(['store', 'copy', ...args], { cwd, env: caseEnv });
      expect(result.code, args.join(' ')).not.toBe(0);
      expect(result.stderr, args.join(' ')).toMatch(message);
      expect(result.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
      if (args.includes('--from') || caseEnv === env) expect(result.stderr, args.join(' ')).not.toContain('CHECKOUT_STORE');
    }
  });

  // A small file system of its own (tmpfs) for the target: root only, as mounting is.
  it.runIf(process.getuid?.() === 0)(
    'a target whose disk fills up: the copy stops in one line saying what was copied stays, exit 1; once there is space, running it again completes it',
    async (context) => {
      const { cwd, env } = await shop(2000);
      const volume = await tempDir('ck-store-full-');
      try {
        execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', volume], { stdio: 'ignore' });
      } catch {
        return context.skip();
      }
      try {
        const to = `file:${join(volume, 'moved')}`;
        const full = await execCli(['store', 'copy', '--to', to], { cwd, env });
        expect(full).toMatchObject({ code: 1, stdout: '' });
        expect(full.stderr).toMatch(
          /^checkout-kit: The copy stopped: the disk holding the target SQLite .*moved\/store\.sqlite is full \(database or disk is full\)\. What was copied so far stays in the target; free some space there, then run the copy again: it copies only what is missing\.\n$/,
        );
        const partial = new SqliteStore({ dir: join(volume, 'moved'), readonly: true });
        const copied = (await partial.listEvents({ limit: 10_000 })).length;
        await partial.close();
        expect(copied).toBeGreaterThan(0);
        expect(copied).toBeLessThan(2000);
        execFileSync('mount', ['-o', 'remount,size=32m', volume]);
        const again = await execCli(['store', 'copy', '--to', to, '--json'], { cwd, env });
        expect(again.code, again.stderr).toBe(0);
        const report = JSON.parse(again.stdout) as { complete: boolean; tables: Array<{ table: string; target: number; copied: number }> };
        expect(report.complete).toBe(true);
        expect(report.tables.find((row) => row.table === 'events')).toMatchObject({ target: 2000, copied: 2000 - copied });
      } finally {
        execFileSync('umount', [volume]);
      }
    },
  );

  it('a source another process opens and writes to during the copy (opened after the copy began) is reported, exit 1; run again, the copy completes', async () => {
    const { cwd, env, dir } = await shop(1);
    const source = new SqliteStore({ dir });
    await source.open();
    // Enough rows that the copy takes a while: the event copied over and over under new ids.
    await source.database.query({
      text: `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 60000)
        INSERT INTO events (id, type, environment, created_at, received_at, resource_kind, resource_id, body, body_escaped)
        SELECT 'evt_bulk_' || i, type, environment, created_at, received_at, resource_kind, resource_id, body, body_escaped FROM n, (SELECT * FROM events LIMIT 1)`,
    });
    await source.close();
    const copy = spawnCli(['store', 'copy', '--to', 'file:moved'], { cwd, env });
    let stdout = '';
    copy.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const exit = new Promise<number | null>((resolve) => copy.once('exit', resolve));
    // Once the copy is under way (events in the target), a cron reconcile, say, opens the source and writes.
    const copiedEvents = () => {
      try {
        const target = loadDriver().open(join(cwd, 'moved', 'store.sqlite'), { readonly: true });
        try {
          return Number(target.prepare('SELECT count(*) AS n FROM events').all()[0]?.n ?? 0);
        } finally {
          target.close();
        }
      } catch {
        return 0;
      }
    };
    await eventually(() => (copiedEvents() > 0 ? true : undefined), 60_000, 5);
    const writer = new SqliteStore({ dir });
    await writer.open();
    await writer.insertDeadLetter({ receivedAt: new Date().toISOString(), reason: 'unparsable', body: 'written during the copy', headers: {} });
    // Still open when the copy ends, as serve would be: it may write after the copy, whether or not its first write came in time.
    const code = await exit;
    await writer.close();
    expect(code).toBe(1);
    expect(stdout).toContain(
      'NOT surely every row of the source is in the target: another process (serve, a cron reconcile, the console) opened the source during the copy and may have written to it. Stop it, then run the copy again; if that reports rows changed since copied, copy into an empty store.',
    );
    const again = await runCli(['store', 'copy', '--to', 'file:moved', '--json'], { cwd, env });
    expect(again.code).toBe(0);
    const report = JSON.parse(again.stdout) as { complete: boolean; tables: Array<{ table: string; source: number; target: number }> };
    expect(report.complete).toBe(true);
    expect(report.tables.find((row) => row.table === 'dead_letters')).toMatchObject({ source: 2, target: 2 });
  });

  it.runIf(DATABASE_URL)(
    'a PostgreSQL URL the server refuses (no such database or role, a reserved schema name) or that does not parse is a configuration error: exit 2, one line naming the setting',
    async () => {
      const { cwd, env } = await shop(1);
      const server = new URL(DATABASE_URL!);
      const wrong = [
        [`postgres://${server.username}@${server.host}/ck_no_such_database`, /database "ck_no_such_database" does not exist/],
        [`postgres://ck_no_such_role@${server.host}${server.pathname}`, /role "ck_no_such_role" does not exist/],
        [`${DATABASE_URL!}?schema=pg_shop`, /unacceptable schema name "pg_shop"/],
        [`postgres://${server.username}@${server.hostname}:not-a-port${server.pathname}`, /Invalid URL/],
      ] as const;
      for (const [url, said] of wrong) {
        for (const [args, setting, commandEnv] of [
          [['store', 'copy', '--to', url], '--to', env],
          [['migrate'], 'CHECKOUT_STORE', { CHECKOUT_STORE: url }],
        ] as const) {
          const result = await runCli([...args], { cwd, env: commandEnv });
          expect([result.code, result.stdout], `${args.join(' ')} (${url})`).toEqual([2, '']);
          expect(result.stderr, url).toMatch(said);
          expect(result.stderr, url).toMatch(
            new RegExp(`^checkout-kit: Could not open the store .*\\. Check ${setting}: its user, password, host, port, database and schema\\.\\n$`),
          );
        }
      }
    },
  );

  it.runIf(DATABASE_URL)('moves a shop from the embedded store to PostgreSQL with nothing lost', async () => {
    const { cwd, env } = await shop(120);
    const schema = randomSchema('ck_copy');
    // A password holding `@` (the server here trusts every local connection): never printed.
    const url = `${DATABASE_URL!.replace(/\/\/([^@/]*@)?/, '//postgres:pw@with@at@')}?schema=${schema}&password=pw-param`;
    const admin = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
    try {
      const result = await runCli(['store', 'copy', '--to', url], { cwd, env });
      expect(result).toMatchObject({ code: 0, stderr: '' });
      expect(result.stdout).toMatch(/events +120 in source, +120 in target, 120 copied now/);
      expect(result.stdout).toMatch(/tenant_credentials +1 in source, +1 in target, 1 copied now/);
      expect(result.stdout).toContain('every row of the source is in the target');
      expect(result.stdout).not.toMatch(/pw@with|with@at|pw-param/);
      const again = await runCli(['store', 'copy', '--to', url], { cwd, env });
      expect(again.stdout).toMatch(/events +120 in source, +120 in target, 0 copied now/);
      // serve reads the moved shop: events list against PostgreSQL.
      const listed = await runCli(['events', 'list', '--json', '--limit', '500'], { cwd, env: { CHECKOUT_STORE: url } });
      expect(JSON.parse(listed.stdout)).toHaveLength(120);
    } finally {
      await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await admin.end();
    }
  });
  it.runIf(DATABASE_URL)(
    'refuses a PostgreSQL source copied onto itself through another spelling of its server; another schema of that database is another store',
    async () => {
      const { cwd, env } = await shop(3);
      const [schema, other] = [randomSchema('ck_self'), randomSchema('ck_other')];
      const server = new URL(DATABASE_URL!);
      const at = (host: string, port: string, name: string) => {
        const url = new URL(DATABASE_URL!);
        url.hostname = host;
        url.port = port;
        url.searchParams.set('schema', name);
        return url.href;
      };
      const source = at(server.hostname, server.port || '5432', schema);
      const admin = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
      try {
        expect((await runCli(['store', 'copy', '--to', source], { cwd, env })).code).toBe(0);
        // The same server by the name localhost, its default port left out: only the server can tell.
        for (const target of [at('localhost', server.port || '5432', schema), at(server.hostname, '', schema)]) {
          const refused = await runCli(['store', 'copy', '--from', source, '--to', target], { cwd, env });
          expect(refused, target).toMatchObject({ code: 2, stdout: '' });
          expect(refused.stderr, target).toMatch(
            /^checkout-kit: The target PostgreSQL .* is the source store itself, reached by another URL\. Nothing was copied: give another store\.\n$/,
          );
        }
        const copied = await runCli(['store', 'copy', '--from', source, '--to', at('localhost', server.port || '5432', other)], { cwd, env });
        expect(copied).toMatchObject({ code: 0, stderr: '' });
        expect(copied.stdout).toMatch(/events +3 in source, +3 in target, 3 copied now/);
      } finally {
        for (const name of [schema, other]) await admin.query(`DROP SCHEMA IF EXISTS "${name}" CASCADE`);
        await admin.end();
      }
    },
  );
});

describe.runIf(DATABASE_URL)('checkout-kit store copy to PostgreSQL stopped midway', () => {
  const children: ChildProcess[] = [];
  const schemas: string[] = [];
  const admin = DATABASE_URL ? new pg.Pool({ connectionString: DATABASE_URL, max: 1 }) : undefined;
  afterEach(async () => {
    await terminateAll(children.splice(0));
    for (const schema of schemas.splice(0)) await admin!.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  });
  afterAll(() => admin?.end());

  /**
   * A shop of 120 events (fewer than a page) and a copy of it to a new schema, started and held
   * once its events are in the target, before it sends its first page of runs: `backend` is the
   * connection that will send it. It goes on when a line reaches its stdin.
   */
  async function pausedCopy() {
    const { cwd, env } = await shop(120);
    const schema = randomSchema('ck_copy');
    schemas.push(schema);
    // A password (the server here trusts every local connection): never printed.
    const url = `${DATABASE_URL!.replace(/\/\/([^@/]*@)?/, '//postgres:secret-pw@')}?schema=${schema}`;
    const PAUSE_MID_COPY = pathToFileURL(join(REPO, 'test/cli/fixtures/pause-mid-copy.mjs')).href;
    const copy = spawnCli(['store', 'copy', '--to', url], { cwd, env, stdin: 'pipe', preload: [PAUSE_MID_COPY] });
    children.push(copy);
    let stderr = '';
    copy.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exit = new Promise<[number | null, NodeJS.Signals | null]>((resolve) => copy.once('exit', (code, by) => resolve([code, by])));
    const [, backend] = await waitForLine(copy, /^backend (\d+)\npaused$/m);
    const eventsInTarget = async () => Number((await admin!.query<{ n: string }>(`SELECT count(*) AS n FROM "${schema}".events`)).rows[0]!.n);
    expect(await eventsInTarget()).toBe(120);
    return { cwd, env, url, schema, copy, exit, stderr: () => stderr, backend: Number(backend), eventsInTarget };
  }

  /** The copy run again to the end: it completes the target. */
  async function completesAgain(cwd: string, env: NodeJS.ProcessEnv, url: string) {
    const again = await runCli(['store', 'copy', '--to', url, '--json'], { cwd, env });
    expect(again.code, again.stderr).toBe(0);
    const report = JSON.parse(again.stdout) as { complete: boolean; tables: Array<{ table: string; source: number; target: number; copied: number }> };
    expect(report.complete).toBe(true);
    expect(report.tables.find((row) => row.table === 'events')).toMatchObject({ source: 120, target: 120, copied: 0 });
    expect(report.tables.filter((row) => row.target !== row.source)).toEqual([]);
  }

  it.each([['SIGINT' as const], ['SIGTERM' as const]])(
    'by %s: ends by that signal saying in one line that what it copied stays in the target and that running it again completes it',
    async (signal) => {
      const { cwd, env, url, schema, copy, exit, stderr, eventsInTarget } = await pausedCopy();
      copy.kill(signal);
      copy.stdin!.end('go\n');
      expect(await exit).toEqual([null, signal]);
      const shownUrl = `${DATABASE_URL!.replace(/\/\/[^@/]*@/, '//')}?schema=${schema}`;
      expect(stderr()).toBe(
        `checkout-kit: store copy stopped (${signal}): the rows it copied so far stay in the target ${shownUrl}; run the copy again to complete it: it copies only what is missing.\n`,
      );
      expect(await eventsInTarget()).toBe(120);
      await completesAgain(cwd, env, url);
    },
  );

  it('by the server dropping its connection: one line saying what it copied stays in the target and that running it again completes it, exit 1', async () => {
    const { cwd, env, url, schema, copy, exit, stderr, backend, eventsInTarget } = await pausedCopy();
    await admin!.query('SELECT pg_terminate_backend($1)', [backend]);
    await eventually(
      async () => ((await admin!.query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [backend])).rowCount === 0 ? true : undefined),
      30_000,
      20,
    );
    copy.stdin!.end('go\n');
    expect(await exit).toEqual([1, null]);
    expect(stderr()).toMatch(
      new RegExp(
        `^checkout-kit: The copy stopped: the target PostgreSQL [^,]+, schema ${schema} cannot be reached \\([^\\n]+\\)\\. What was copied so far stays in the target; check that its server is up, then run the copy again: it copies only what is missing\\.\\n$`,
      ),
    );
    expect(stderr()).not.toMatch(/nothing was written|secret-pw/i);
    expect(await eventsInTarget()).toBe(120);
    await completesAgain(cwd, env, url);
  });
});

describe('checkout-kit store restore', () => {
  const children: ChildProcess[] = [];
  afterEach(() => terminateAll(children.splice(0)));

  it('puts a backup in place as its own process would: what the backup held, the replaced store moved aside whole, and a restart opens it', async () => {
    const { cwd, env, dir } = await shop(20);
    expect((await execCli(['store', 'backup', 'backups/b.sqlite'], { cwd, env })).code).toBe(0);
    // Written after the backup: the restore takes the store back to before it.
    const later = new SqliteStore({ dir });
    await later.open();
    await later.insertEvent(sampleEvent('evt_after_backup'));
    await later.close();

    const restored = await execCli(['store', 'restore', 'backups/b.sqlite', '--json'], { cwd, env });
    expect(restored.code, restored.stderr).toBe(0);
    const report = JSON.parse(restored.stdout) as { dir: string; backup: string; replaced: string };
    expect(report).toEqual({ dir, backup: join(cwd, 'backups/b.sqlite'), replaced: expect.stringMatching(/\.checkout-kit\/replaced-\d{8}T\d{6}Z$/) });
    // The backup in the store's place (beside it only the restore's lock file), no -wal or -shm of the store it replaced; that one's files together.
    expect((await readdir(dir)).sort()).toEqual([basename(report.replaced), 'store.sqlite', 'store.sqlite.restore-lock']);
    expect(await readdir(report.replaced)).toContain('store.sqlite');
    const listed = await execCli(['events', 'list', '--json', '--limit', '100'], { cwd, env });
    expect(listed.code, listed.stderr).toBe(0);
    const ids = (JSON.parse(listed.stdout) as Array<{ id: string }>).map((event) => event.id);
    expect(ids).toHaveLength(20);
    expect(ids).not.toContain('evt_after_backup');
    expect((await execCli(['store', 'check'], { cwd, env })).code).toBe(0);
    // The store it replaced keeps everything, the later event included.
    const old = new SqliteStore({ dir: report.replaced, readonly: true });
    expect(await old.getEvent('evt_after_backup')).toBeDefined();
    await old.close();
    // The restored store takes writes again.
    const reopened = new SqliteStore({ dir });
    await reopened.open();
    expect(await reopened.insertEvent(sampleEvent('evt_after_restore'))).toEqual({ inserted: true });
    await reopened.close();
  });

  it('refuses while another process has the store open, and changes nothing', async () => {
    const { cwd, env, dir } = await shop(5);
    expect((await execCli(['store', 'backup', 'b.sqlite'], { cwd, env })).code).toBe(0);
    const port = await freePort();
    const consoleProcess = spawnCli(['console', '--port', String(port)], { cwd, env: { ...env, LOG_LEVEL: 'warn' } });
    children.push(consoleProcess);
    await waitForLine(consoleProcess, /checkout-kit console on/);
    // The console opened the store on start; it is idle now, and still holds it.
    const refused = await execCli(['store', 'restore', 'b.sqlite'], { cwd, env });
    expect(refused).toMatchObject({ code: 1, stdout: '' });
    expect(refused.stderr).toMatch(
      /^checkout-kit: The store .*\.checkout-kit is open in another process \(serve, a cron reconcile, the console…\): stop them, then restore\. Nothing was changed\.\n$/,
    );
    expect(await readdir(dir)).toEqual(expect.not.arrayContaining([expect.stringMatching(/replaced|restoring/)]));
    await stopProcess(consoleProcess);
    const restored = await execCli(['store', 'restore', 'b.sqlite'], { cwd, env });
    expect(restored.code, restored.stderr).toBe(0);
    expect(restored.stdout).toMatch(
      /restored from .*b\.sqlite\n {2}the store it replaced is in .*\nStart serve, then run `checkout-kit reconcile --older-than 1m`/,
    );
    expect((await readdir(dir)).filter((name) => !name.startsWith('replaced-'))).toEqual(['store.sqlite', 'store.sqlite.restore-lock']);
  });

  it('refuses what is no backup of a store this version reads, in one line, exit 2, nothing moved', async () => {
    const { cwd, env, file } = await shop(200);
    const before = await readFile(file);
    await writeFile(join(cwd, 'text.sqlite'), 'not a database, but long enough to be read as one: '.repeat(100));
    const damagedCopy = join(cwd, 'damaged.sqlite');
    expect((await execCli(['store', 'backup', damagedCopy], { cwd, env })).code).toBe(0);
    await damage(damagedCopy);
    const otherDb = join(cwd, 'other.sqlite');
    const other = new SqliteStore({ dir: join(cwd, 'other') });
    await other.open();
    await other.close();
    await rename(join(cwd, 'other', 'store.sqlite'), otherDb);
    const cases: Array<[string, RegExp]> = [
      ['missing.sqlite', /^checkout-kit: There is no file .*missing\.sqlite: name a file `checkout-kit store backup` wrote\.$/],
      ['.', /is not a backup: name a file `checkout-kit store backup` wrote/],
      ['text.sqlite', /The backup .*text\.sqlite is damaged or not a database/],
      ['damaged.sqlite', /The backup .*damaged\.sqlite is damaged/],
      [join('.checkout-kit', 'store.sqlite'), /is inside the store's folder .*: move it elsewhere first/],
      ['', /store restore takes the backup to put in place/],
    ];
    const newer = loadDriver().open(otherDb);
    newer.exec(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'from a newer checkout-kit', '2030-01-01T00:00:00.000Z')`);
    newer.close();
    cases.push(['other.sqlite', /is a store of a newer checkout-kit \(schema 999; this one knows up to \d+\): upgrade checkout-kit, then restore/]);
    for (const [file, message] of cases) {
      const refused = await execCli(['store', 'restore', file], { cwd, env });
      expect(refused, file).toMatchObject({ code: 2, stdout: '' });
      expect(refused.stderr.split('\n').filter(Boolean), file).toEqual([expect.stringMatching(message)]);
    }
    expect(await readFile(file)).toEqual(before);
    expect((await readdir(join(cwd, '.checkout-kit'))).filter((name) => /replaced|restoring/.test(name))).toEqual([]);
  });

  it.each([
    ['pages damaged', damage],
    ['not a database at all', (file: string) => writeFile(file, 'not a database, but long enough to be read as one: '.repeat(100))],
  ])('restores over a damaged store (%s), which it moves aside as it is', async (_name, spoil) => {
    const { cwd, env, file } = await shop(200);
    expect((await execCli(['store', 'backup', 'b.sqlite'], { cwd, env })).code).toBe(0);
    await spoil(file);
    const spoiled = await readFile(file);
    expect((await execCli(['store', 'check'], { cwd, env })).code).toBe(1);
    const restored = await execCli(['store', 'restore', 'b.sqlite', '--json'], { cwd, env });
    expect(restored.code, restored.stderr).toBe(0);
    expect((await execCli(['store', 'check'], { cwd, env })).code).toBe(0);
    expect(await readFile(join((JSON.parse(restored.stdout) as { replaced: string }).replaced, 'store.sqlite'))).toEqual(spoiled);
  });

  it("restores a store file another store's process left with its WAL (SIGKILLed): what the WAL held comes too", async () => {
    const { cwd, env } = await shop(3);
    // A second shop whose serve was killed: its events are in store.sqlite-wal, not yet in store.sqlite.
    const other = await tempDir('ck-store-killed-');
    const killed = spawn(
      process.execPath,
      [
        '--import',
        TSX_LOADER,
        '--input-type=module',
        '-e',
        `
      const { SqliteStore } = await import(${JSON.stringify(pathToFileURL(join(REPO, 'src/store/index.ts')).href)});
      const store = new SqliteStore({ dir: ${JSON.stringify(join(other, 'store'))} });
      await store.open();
      for (let i = 0; i < 40; i++) await store.insertEvent({ id: 'evt_wal_' + i, type: 'payment.paid', environment: 'test', createdAt: new Date().toISOString(), receivedAt: new Date().toISOString(), resourceKind: 'payment', resourceId: 'p' + i, body: '{}' });
      console.log('stored');
      setInterval(() => {}, 1000);
    `,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const exited = new Promise((resolve) => killed.once('exit', resolve));
    try {
      await waitForLine(killed, /stored/);
    } finally {
      killed.kill('SIGKILL');
      await exited;
    }
    expect((await stat(join(other, 'store', 'store.sqlite-wal'))).size).toBeGreaterThan(0);
    const restored = await execCli(['store', 'restore', join(other, 'store', 'store.sqlite')], { cwd, env });
    expect(restored.code, restored.stderr).toBe(0);
    const listed = await execCli(['events', 'list', '--json', '--limit', '100'], { cwd, env });
    expect((JSON.parse(listed.stdout) as unknown[]).length).toBe(40);
  });

  it('refuses a folder that holds more than a store, and an empty --dir, moving nothing', async () => {
    const { cwd, env } = await shop(3);
    const backup = join(await tempDir('ck-store-backups-'), 'b.sqlite');
    expect((await execCli(['store', 'backup', backup], { cwd, env })).code).toBe(0);
    await mkdir(join(cwd, 'src'));
    await writeFile(join(cwd, 'src', 'app.ts'), 'export {};');
    for (const [dir, message] of [
      ['.', /holds more than a store \(.*\): name the store's own folder .* Nothing was changed\./],
      ['src', /src holds more than a store \(app\.ts\)/],
      ['', /^checkout-kit: store restore: --dir is empty: give the store's folder/],
    ] as const) {
      const refused = await execCli(['store', 'restore', backup, '--dir', dir], { cwd, env });
      expect(refused, dir).toMatchObject({ code: 2, stdout: '' });
      expect(refused.stderr.split('\n').filter(Boolean), dir).toEqual([expect.stringMatching(message)]);
    }
    expect((await readdir(cwd)).sort()).toEqual(['.checkout-kit', 'src']);
    expect(await readdir(join(cwd, 'src'))).toEqual(['app.ts']);
  });

  it('keeps a store folder that is a link a link: the backup lands where the link points', async () => {
    const { cwd, env, dir } = await shop(3);
    expect((await execCli(['store', 'backup', 'b.sqlite'], { cwd, env })).code).toBe(0);
    const volume = join(await tempDir('ck-store-volume-'), 'data');
    await rename(dir, volume);
    await symlink(volume, dir);
    expect((await execCli(['store', 'restore', 'b.sqlite'], { cwd, env })).code).toBe(0);
    expect((await lstat(dir)).isSymbolicLink()).toBe(true);
    expect((await readdir(volume)).filter((name) => !name.startsWith('replaced-'))).toEqual(['store.sqlite', 'store.sqlite.restore-lock']);
    const listed = await execCli(['events', 'list', '--json'], { cwd, env });
    expect(JSON.parse(listed.stdout)).toHaveLength(3);
  });

  /**
   * A shop of `events` events, backed up to b.sqlite, then one event more; and a restore of that
   * backup started, stopped just before it moves the old store aside (until a line on its stdin).
   */
  async function pausedRestore(events: number) {
    const { cwd, env, dir } = await shop(events);
    expect((await execCli(['store', 'backup', 'b.sqlite'], { cwd, env })).code).toBe(0);
    const later = new SqliteStore({ dir });
    await later.open();
    await later.insertEvent(sampleEvent('evt_after_backup'));
    await later.close();
    const restore = spawnCli(['store', 'restore', 'b.sqlite'], { cwd, env, stdin: 'pipe', preload: [PAUSE_BEFORE_REPLACING] });
    children.push(restore);
    let out = '';
    restore.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const exit = new Promise<number | null>((resolve) => restore.once('exit', resolve));
    await waitForLine(restore, /^paused$/m);
    return { cwd, env, dir, restore, exit, out: () => out };
  }

  it('refuses a second restore of one store while the first is mid-swap, in one line; the first completes and nothing of the store is lost', async () => {
    const { cwd, env, dir, restore: first, exit: firstExit, out: firstOut } = await pausedRestore(20);

    const second = await execCli(['store', 'restore', 'b.sqlite'], { cwd, env });
    expect(second).toMatchObject({ code: 1, stdout: '' });
    expect(second.stderr).toMatch(
      /^checkout-kit: Another restore of the store .*\.checkout-kit is running: let it finish, and check what it restored\. Nothing was changed\.\n$/,
    );

    first.stdin!.end('go\n');
    expect(await firstExit).toBe(0);
    expect(firstOut()).toMatch(/restored from .*b\.sqlite/);
    // One swap: the backup in place, the store it replaced whole in one replaced-<time> (and the lock's file).
    const names = (await readdir(dir)).sort();
    expect(names).toEqual([expect.stringMatching(/^replaced-\d{8}T\d{6}Z$/), 'store.sqlite', 'store.sqlite.restore-lock']);
    const old = new SqliteStore({ dir: join(dir, names[0]!), readonly: true });
    expect(await old.getEvent('evt_after_backup')).toBeDefined();
    expect((await old.listEvents({ limit: 100 })).length).toBe(21);
    await old.close();
    const listed = await execCli(['events', 'list', '--json', '--limit', '100'], { cwd, env });
    expect((JSON.parse(listed.stdout) as unknown[]).length).toBe(20);
  });

  it('a restore killed midway leaves no lock behind: the next one restores, and clears what the killed one left', async () => {
    const { cwd, env, dir, restore: killed, exit: gone } = await pausedRestore(3);
    expect((await readdir(dir)).some((name) => name.startsWith('store.sqlite.restoring-'))).toBe(true);
    killed.kill('SIGKILL');
    await gone;

    const restored = await execCli(['store', 'restore', 'b.sqlite'], { cwd, env });
    expect(restored.code, restored.stderr).toBe(0);
    // Its copy of the backup and the replaced-<time> folder it made but moved nothing into are gone.
    const names = (await readdir(dir)).sort();
    expect(names).toEqual([expect.stringMatching(/^replaced-\d{8}T\d{6}Z(-\d+)?$/), 'store.sqlite', 'store.sqlite.restore-lock']);
    expect(await readdir(join(dir, names[0]!))).toContain('store.sqlite');
    const listed = await execCli(['events', 'list', '--json'], { cwd, env });
    expect((JSON.parse(listed.stdout) as Array<{ id: string }>).map((event) => event.id)).not.toContain('evt_after_backup');
    expect(JSON.parse(listed.stdout)).toHaveLength(3);
  });

  it('refuses to restore when its lock file cannot be written (a restore run as another user made it), saying which, and changes nothing', async (context) => {
    const { cwd, env, dir, file } = await shop(3);
    expect((await execCli(['store', 'backup', 'b.sqlite'], { cwd, env })).code).toBe(0);
    expect((await execCli(['store', 'restore', 'b.sqlite'], { cwd, env })).code).toBe(0);
    const lock = join(dir, 'store.sqlite.restore-lock');
    // SQLite opens a file it cannot write read-only, where its exclusive lock would be a shared one.
    if (process.getuid?.() === 0) {
      try {
        execFileSync('chattr', ['+i', lock], { stdio: 'ignore' });
      } catch {
        return context.skip(); // a file system without immutable files
      }
    } else await chmod(lock, 0o444);
    try {
      const before = await readFile(file);
      const refused = await execCli(['store', 'restore', 'b.sqlite'], { cwd, env });
      expect(refused).toMatchObject({ code: 1, stdout: '' });
      expect(refused.stderr).toMatch(
        /^checkout-kit: Cannot take the restore's lock .*store\.sqlite\.restore-lock \(.*\): it is not writable by this user .*: fix its owner, or remove it, then restore again\. Nothing was changed\.\n$/,
      );
      expect(await readFile(file)).toEqual(before);
    } finally {
      if (process.getuid?.() === 0) execFileSync('chattr', ['-i', lock]);
    }
  });

  it('restores into a folder where no store was yet', async () => {
    const { cwd, env } = await shop(3);
    expect((await execCli(['store', 'backup', 'b.sqlite'], { cwd, env })).code).toBe(0);
    const fresh = await tempDir('ck-store-fresh-');
    await rename(join(cwd, 'b.sqlite'), join(fresh, 'b.sqlite'));
    const restored = await execCli(['store', 'restore', 'b.sqlite', '--json'], { cwd: fresh, env });
    expect(restored.code, restored.stderr).toBe(0);
    expect(JSON.parse(restored.stdout)).toMatchObject({ dir: join(fresh, '.checkout-kit'), replaced: null });
    const listed = await execCli(['events', 'list', '--json'], { cwd: fresh, env });
    expect(JSON.parse(listed.stdout)).toHaveLength(3);
  });
});

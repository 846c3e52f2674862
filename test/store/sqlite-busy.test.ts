import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterEach, expect, it } from 'vitest';
import { SqliteStore } from '../../src/store/index.js';
import { MIGRATIONS } from '../../src/store/sql/migrations.js';
import { execCli } from '../support/cli.js';
import { removeTempDirs, tempDir } from '../support/temp-dirs.js';
import { sampleEvent } from './fixtures/sample-event.js';
import { sqliteStoreAtVersionOne } from './helpers.js';

afterEach(removeTempDirs);

/**
 * Another process that opens the store's file, runs `take` (SQL that takes a lock), says `held`, and
 * lets go as `release` (JS with `db`) says; its stdout lines, after `held`, are returned. Its stderr is
 * the test's, without Node 22's warning that node:sqlite is experimental.
 */
async function lockHolder(dir: string, take: string, release: string) {
  const holder = spawn(
    process.execPath,
    [
      '--disable-warning=ExperimentalWarning',
      '-e',
      `const open = (path) => { try { return new (require('node:sqlite').DatabaseSync)(path); } catch { return new (require('better-sqlite3'))(path); } };
       const db = open(${JSON.stringify(join(dir, 'store.sqlite'))});
       db.exec(${JSON.stringify(take)});
       console.log('held');
       ${release}`,
    ],
    { cwd: process.cwd(), stdio: ['pipe', 'pipe', 'inherit'] },
  );
  const lines = createInterface({ input: holder.stdout! })[Symbol.asyncIterator]();
  expect((await lines.next()).value).toBe('held');
  return { holder, lines };
}

// A process holding the write lock (a long `store copy`, a backup, another writer) must not freeze
// serve: its writes wait for the lock between tries, and the event loop keeps answering meanwhile.
it('a write waiting for another process to let go of the lock leaves the event loop running, then lands', async () => {
  const dir = await tempDir('ck-sqlite-busy-');
  const store = new SqliteStore({ dir });
  await store.open();
  // The other process keeps the write lock until told to let go on stdin.
  const { holder, lines } = await lockHolder(
    dir,
    'BEGIN IMMEDIATE',
    `process.stdin.once('data', () => { db.exec('COMMIT'); console.log('released'); process.exit(0); });`,
  );

  let settled = false;
  const insert = store.insertEvent(sampleEvent('evt_busy')).finally(() => (settled = true));
  // Timers still fire while the write waits: the loop is not held in SQLite's busy wait.
  for (let i = 0; i < 5; i++) await new Promise((resolve) => setTimeout(resolve, 20));
  expect(settled).toBe(false);
  holder.stdin!.write('go\n');
  expect((await lines.next()).value).toBe('released');
  expect(await insert).toEqual({ inserted: true });
  expect((await store.getEvent('evt_busy'))?.id).toBe('evt_busy');
  await store.close();
});

// Processes opening a new store together (serve and a cron reconcile at first start): the one that
// switches the file to WAL needs it to itself, and SQLite answers the others BUSY at once, without
// waiting. Opening waits for the switch rather than failing.
it('opening a new store while another process writes to it waits for that process to let go, then opens', async () => {
  const dir = await tempDir('ck-sqlite-busy-');
  // The other process writes to a new file (still in SQLite's default journal mode, as while it is
  // being switched) and lets go by itself shortly after: this process is inside a synchronous open
  // meanwhile and cannot tell it to.
  await lockHolder(
    dir,
    'CREATE TABLE IF NOT EXISTS other (x); BEGIN IMMEDIATE; INSERT INTO other VALUES (1)',
    `setTimeout(() => { db.exec('COMMIT'); process.exit(0); }, 300);`,
  );

  const store = new SqliteStore({ dir });
  await store.open();
  expect(await store.insertEvent(sampleEvent('evt_after_open'))).toEqual({ inserted: true });
  await store.close();
});

// `checkout-kit migrate` beside a process that keeps the write lock past the 5 s wait: it says the
// store is busy and to run it again, exit 1, and applies nothing; run again once the lock is let go, it migrates.
it('checkout-kit migrate of a store another process keeps locked says it is busy and to run it again, then migrates once the lock is let go', async () => {
  const dir = await tempDir('ck-sqlite-busy-');
  await sqliteStoreAtVersionOne(dir);
  const { holder, lines } = await lockHolder(
    dir,
    'BEGIN IMMEDIATE',
    `process.stdin.once('data', () => { db.exec('COMMIT'); console.log('released'); process.exit(0); });`,
  );
  const env = { CHECKOUT_STORE: `file:${dir}` };
  const busy = await execCli(['migrate'], { cwd: dir, env });
  expect(busy).toMatchObject({ code: 1, stdout: '' });
  expect(busy.stderr).toMatch(
    /^checkout-kit: SQLite .*store\.sqlite is busy: another process \(.*\) held what migrate needed past its wait, so migrate stopped \(each version is applied whole or not at all; those applied before it stay\)\. Run `checkout-kit migrate` again once serve and reconcile are stopped or idle\.\n$/,
  );
  holder.stdin!.write('go\n');
  expect((await lines.next()).value).toBe('released');
  const migrated = await execCli(['migrate', '--json'], { cwd: dir, env });
  expect(migrated.code, migrated.stderr).toBe(0);
  expect((JSON.parse(migrated.stdout) as { applied: Array<{ version: number }> }).applied.map((row) => row.version)).toEqual(
    MIGRATIONS.slice(1).map((migration) => migration.version),
  );
});

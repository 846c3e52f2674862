import { execFile } from 'node:child_process';
import { open, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { StoreError } from '../../src/errors/index.js';
import { SqliteStore } from '../../src/store/index.js';
import { loadDriver, sqliteErrorCode, type SqliteConnection, type SqliteDriver, type SqliteDriverName } from '../../src/store/sqlite/driver.js';
import { sqliteDatabase, storeError } from '../../src/store/sqlite/sqlite-database.js';
import { CLI_MAIN, TSX_LOADER } from '../support/cli.js';
import { TEST_KEYS } from '../support/fixtures.js';
import { removeTempDirs, tempDir } from '../support/temp-dirs.js';
import { storeContract } from './contract.js';
import { sampleEvent } from './fixtures/sample-event.js';

afterEach(() => removeTempDirs());

const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
/** node:sqlite with everything the store uses: Node 22.16 and later. */
const HAS_NODE_SQLITE = major > 22 || (major === 22 && minor >= 16);

function available(name: SqliteDriverName): SqliteDriver | undefined {
  try {
    return loadDriver(name);
  } catch {
    return undefined;
  }
}
const DRIVERS = (['node:sqlite', 'better-sqlite3'] as const).map((name) => ({ name, driver: available(name) }));

describe('choosing the SQLite driver', () => {
  it('uses node:sqlite where Node has it, else better-sqlite3', () => {
    expect(loadDriver().name).toBe(HAS_NODE_SQLITE ? 'node:sqlite' : 'better-sqlite3');
    expect(new SqliteStore().driver).toBe(loadDriver().name);
  });

  it('says which Node has node:sqlite when asked for it on one without', () => {
    if (HAS_NODE_SQLITE) expect(available('node:sqlite')?.name).toBe('node:sqlite');
    else
      expect(() => loadDriver('node:sqlite')).toThrow(
        new StoreError(`The embedded store was asked for node:sqlite, which Node ${process.version} does not have (Node 22.16 or later has it).`),
      );
  });

  it.runIf(HAS_NODE_SQLITE)('on a Node that has node:sqlite, a failure of node:sqlite is told with its reason, not as better-sqlite3 to install', async () => {
    const getBuiltinModule = process.getBuiltinModule;
    process.getBuiltinModule = ((id: string) => {
      if (id === 'node:sqlite') throw new Error('simulated: cannot load');
      return getBuiltinModule(id);
    }) as typeof getBuiltinModule;
    try {
      vi.resetModules();
      const fresh = await import('../../src/store/sqlite/driver.js');
      const told = new StoreError(`The embedded store could not use node:sqlite, which Node ${process.version} has built in: simulated: cannot load`);
      expect(() => fresh.loadDriver('node:sqlite')).toThrow(told);
      // Without a loadable better-sqlite3 (the case here unless it was built for this Node), the default too.
      if (!available('better-sqlite3')) expect(() => fresh.loadDriver()).toThrow(told);
    } finally {
      process.getBuiltinModule = getBuiltinModule;
      vi.resetModules();
    }
  });

  it('opens the store without a warning on stderr (Node 22 warns that SQLite is experimental)', async () => {
    const script = `import { loadDriver } from './src/store/sqlite/driver.ts';
      const db = loadDriver().open(':memory:'); db.exec('CREATE TABLE t (x)'); db.close();
      await new Promise((resolve) => setTimeout(resolve, 50)); process.emitWarning('still passed on', 'UserWarning');`;
    const { stderr } = await promisify(execFile)(process.execPath, ['--import', TSX_LOADER, '--input-type=module', '-e', script], {
      cwd: join(import.meta.dirname, '../..'),
    });
    // Other warnings still reach stderr.
    expect(stderr).toMatch(/^\(node:\d+\) UserWarning: still passed on\n/);
    expect(stderr).not.toMatch(/ExperimentalWarning|experimental/i);
  });

  it.runIf(!HAS_NODE_SQLITE)(
    'with no SQLite driver at all, a command stops with exit 2 and one line saying what to install, as for a missing optional peer',
    async () => {
      const cwd = await tempDir('ck-sqlite-none-');
      const hide = join(import.meta.dirname, 'fixtures/hide-better-sqlite3.mjs');
      const result = await promisify(execFile)(
        process.execPath,
        ['--import', pathToFileURL(hide).href, '--import', TSX_LOADER, CLI_MAIN, 'console', '--port', '0'],
        {
          cwd,
          env: { PATH: process.env.PATH },
        },
      ).then(
        () => ({ code: 0, stderr: '' }),
        (error: { code: number; stderr: string }) => ({ code: error.code, stderr: error.stderr }),
      );
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/^checkout-kit: The embedded store needs SQLite: .*npm install better-sqlite3@12.*\n$/);
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
    },
  );

  it('with no SQLite driver, a command that would create the store stops before making its folder', async () => {
    const hide = pathToFileURL(join(import.meta.dirname, 'fixtures/hide-sqlite.mjs')).href;
    const env = {
      PATH: process.env.PATH,
      CHECKOUT_BASE_URL: 'http://127.0.0.1:9',
      CHECKOUT_API_KEY: TEST_KEYS.apiKey,
      CHECKOUT_SIGNING_SECRET: TEST_KEYS.signingSecret,
      CHECKOUT_PARTNER_API_KEY: TEST_KEYS.partnerApiKey,
      CHECKOUT_PARTNER_SIGNING_SECRET: TEST_KEYS.partnerSigningSecret,
      CHECKOUT_WEBHOOK_SECRET: 'whsec_test',
    };
    // The ways a command opens the store to create it: serve's runtime, the console's, withStore's `create`, check's own.
    const commands = [
      ['console', '--port', '0'],
      ['serve', '--port', '0'],
      ['merchants', 'onboard', '--tenant', 'shop-1', '--name', 'Shop', '--email', 'owner@example.com'],
      ['check', '--against', 'http://127.0.0.1:9'],
    ];
    const outcomes = [];
    for (const command of commands) {
      const cwd = await tempDir('ck-sqlite-none-folder-');
      await writeFile(join(cwd, 'fulfillment.mjs'), 'export default {};\n');
      const stderr = await promisify(execFile)(process.execPath, ['--import', hide, '--import', TSX_LOADER, CLI_MAIN, ...command], {
        cwd,
        env,
        timeout: 30_000,
      }).then(
        () => 'exited 0',
        (error: { stderr: string }) => error.stderr,
      );
      const noSqlite = /^checkout-kit: The embedded store (needs SQLite|could not use node:sqlite)/.test(stderr);
      outcomes.push({ command: command.join(' '), told: noSqlite ? 'no SQLite' : stderr, left: await readdir(cwd) });
    }
    expect(outcomes).toEqual(commands.map((command) => ({ command: command.join(' '), told: 'no SQLite', left: ['fulfillment.mjs'] })));
  });

  it.runIf(HAS_NODE_SQLITE)(
    'needs no better-sqlite3 where Node has node:sqlite: with it not installed, a store opens, writes, reads and backs up',
    async () => {
      const dir = await tempDir('ck-sqlite-no-addon-');
      // In the child, better-sqlite3 cannot be found, by require or import (module.registerHooks: Node 22.15 and later).
      const notInstalled = `import { registerHooks } from 'node:module';
      registerHooks({ resolve(specifier, context, next) {
        if (specifier === 'better-sqlite3') throw Object.assign(new Error("Cannot find module 'better-sqlite3'"), { code: 'MODULE_NOT_FOUND' });
        return next(specifier, context);
      } });`;
      const script = `import { createRequire } from 'node:module';
      import { SqliteStore } from './src/store/index.ts';
      import { sampleEvent } from './test/store/fixtures/sample-event.ts';
      let addon = 'found';
      try { createRequire(import.meta.url)('better-sqlite3'); } catch (error) { addon = error.code; }
      const store = new SqliteStore({ dir: ${JSON.stringify(join(dir, 'store'))} });
      await store.open();
      const inserted = (await store.insertEvent(sampleEvent('evt_no_addon'))).inserted;
      await store.backup(${JSON.stringify(join(dir, 'backup.sqlite'))});
      const read = (await store.getEvent('evt_no_addon'))?.id;
      await store.close();
      console.log(JSON.stringify({ addon, driver: store.driver, inserted, read }));`;
      const { stdout } = await promisify(execFile)(
        process.execPath,
        ['--import', TSX_LOADER, '--import', `data:text/javascript,${encodeURIComponent(notInstalled)}`, '--input-type=module', '-e', script],
        { cwd: join(import.meta.dirname, '../..') },
      );
      expect(JSON.parse(stdout)).toEqual({ addon: 'MODULE_NOT_FOUND', driver: 'node:sqlite', inserted: true, read: 'evt_no_addon' });
      const backup = loadDriver().open(join(dir, 'backup.sqlite'), { readonly: true });
      expect(backup.prepare('SELECT id FROM events').all()).toEqual([{ id: 'evt_no_addon' }]);
      backup.close();
    },
  );
});

for (const { name, driver } of DRIVERS) {
  describe.skipIf(!driver)(`the ${name} driver`, () => {
    const d = driver!;
    const opened: SqliteConnection[] = [];
    const connect = (path: string, readonly = false) => {
      const connection = d.open(path, { readonly });
      opened.push(connection);
      return connection;
    };
    afterEach(() => {
      for (const connection of opened.splice(0)) {
        try {
          connection.close();
        } catch {
          // Closed by the test.
        }
      }
    });

    it('binds $1… out of order and repeated, and leaves a $1 in quoted text or a comment alone', () => {
      const db = connect(':memory:');
      const select = db.prepare(
        `SELECT $2 AS b, $1 AS a, $2 AS again, '$1 ''$2''' AS literal, "$1" AS quoted -- $3 in a comment
         /* and $4 in another */ FROM (SELECT 'col' AS "$1")`,
      );
      expect({ ...select.all(['one', 'two'])[0] }).toEqual({ b: 'two', a: 'one', again: 'two', literal: "$1 '$2'", quoted: 'col' });
    });

    it('binds a statement of thousands of values (a batch of events, a page of a copy), each to its own parameter', () => {
      const db = connect(':memory:');
      db.exec('CREATE TABLE t (a INTEGER, b TEXT)');
      const rows = 3000;
      const tuples = Array.from({ length: rows }, (_, i) => `($${2 * i + 1}, $${2 * i + 2})`).join(', ');
      const values = Array.from({ length: rows }, (_, i) => [i, `v${i}`]).flat();
      expect(db.prepare(`INSERT INTO t (a, b) VALUES ${tuples}`).run(values)).toEqual({ changes: rows });
      expect({ ...db.prepare(`SELECT count(*) AS n FROM t WHERE b = 'v' || a`).all()[0] }).toEqual({ n: rows });
    });

    it('binds $1… from values in order, repeated ones too; booleans as 1/0, undefined as NULL', () => {
      const db = connect(':memory:');
      db.exec('CREATE TABLE t (id TEXT PRIMARY KEY, a INTEGER, b INTEGER, c TEXT, d TEXT); CREATE TABLE u (x TEXT)');
      const insert = db.prepare('INSERT INTO t (id, a, b, c, d) VALUES ($1, $2, $3, $4, $4) ON CONFLICT (id) DO NOTHING RETURNING id, a, b, c, d');
      expect(insert.returnsRows).toBe(true);
      expect(insert.all(['x', true, false, undefined])).toEqual([{ id: 'x', a: 1, b: 0, c: null, d: null }]);
      expect(insert.all(['x', 1, 1, 'again'])).toEqual([]);
      const update = db.prepare('UPDATE t SET c = $2 WHERE id = $1');
      expect(update.returnsRows).toBe(false);
      expect(update.run(['x', 'é 😀 \u2028'])).toEqual({ changes: 1 });
      expect(update.run(['nobody', 'z'])).toEqual({ changes: 0 });
      expect({ ...db.prepare('SELECT c FROM t').all()[0] }).toEqual({ c: 'é 😀 \u2028' });
      expect(db.prepare('SELECT count(*) AS n FROM t').returnsRows).toBe(true);
      expect(db.prepare('INSERT INTO u (x) VALUES ($1)').returnsRows).toBe(false);
      expect(db.prepare('INSERT INTO u (x) VALUES ($1)').run(['q'])).toEqual({ changes: 1 });
    });

    it('runs several statements in one exec, and knows whether a transaction is open', () => {
      const db = connect(':memory:');
      db.exec('CREATE TABLE t (x); BEGIN IMMEDIATE; INSERT INTO t VALUES (1); SAVEPOINT unit');
      expect(db.inTransaction).toBe(true);
      db.exec('INSERT INTO t VALUES (2); ROLLBACK TO unit; RELEASE unit; COMMIT');
      expect(db.inTransaction).toBe(false);
      expect(
        db
          .prepare('SELECT x FROM t')
          .all()
          .map((row) => row.x),
      ).toEqual([1]);
    });

    it('sets WAL on every connection the store opens, reopened ones included, and synchronous = NORMAL on the writer (the store syncs the WAL itself); the writer waits for other processes outside SQLite', async () => {
      const dir = await tempDir('ck-driver-');
      const path = join(dir, 'store.sqlite');
      for (let round = 0; round < 2; round++) {
        const database = sqliteDatabase({ path, driver: name, busyTimeoutMs: 1234 });
        await database.query({ text: 'CREATE TABLE IF NOT EXISTS t (x)' });
        const settings = (connection: SqliteConnection) => ({
          journal: connection.pragma('journal_mode')[0]?.journal_mode,
          synchronous: connection.pragma('synchronous')[0]?.synchronous,
          timeout: connection.pragma('busy_timeout')[0]?.timeout,
        });
        expect(database.connection.driver).toBe(name);
        // busy_timeout 0: a write waiting for another process's lock waits off the event loop (`beginWrite`).
        expect(settings(database.connection)).toEqual({ journal: 'wal', synchronous: 1, timeout: 0 });
        await database.close();
      }
      // What the driver itself gives a reopened WAL file (better-sqlite3: NORMAL): the store sets each connection's own.
      const bare = connect(path);
      expect(bare.pragma('journal_mode')[0]?.journal_mode).toBe('wal');
      expect(bare.pragma('synchronous')[0]?.synchronous).toBe(name === 'better-sqlite3' ? 1 : 2);
    });

    it('backs up a database in use to a file that opens with the same rows', async () => {
      const dir = await tempDir('ck-driver-');
      const db = connect(join(dir, 'a.sqlite'));
      db.exec("PRAGMA journal_mode = WAL; CREATE TABLE t (x); INSERT INTO t SELECT value FROM json_each('[1,2,3]')");
      await db.backup(join(dir, 'copy.sqlite'));
      const copy = connect(join(dir, 'copy.sqlite'), true);
      expect(copy.prepare('SELECT sum(x) AS s FROM t').all()[0]?.s).toBe(6);
      expect(copy.pragma('integrity_check')[0]?.integrity_check).toBe('ok');
    });

    it("gives SQLite's primary code of each failure the store explains", async () => {
      const dir = await tempDir('ck-driver-');
      const failure = (work: () => unknown) => {
        try {
          work();
        } catch (error) {
          return { code: sqliteErrorCode(error), error };
        }
        throw new Error('did not fail');
      };
      // Not a database.
      await writeFile(join(dir, 'text.sqlite'), 'not a database, just some text that is long enough to be read as a header of something');
      const notADb = failure(() => connect(join(dir, 'text.sqlite')).prepare('SELECT * FROM sqlite_master').all());
      expect(notADb.code).toBe('SQLITE_NOTADB');
      expect(storeError('text.sqlite', notADb.error).message).toBe(
        'The store text.sqlite is damaged (file is not a database). The file was left untouched. Restore the latest backup (`checkout-kit store restore <file>`), or move the folder aside to start with an empty store; then `checkout-kit reconcile` catches up.',
      );
      // A folder where the file should be.
      const cannotOpen = failure(() => connect(dir).prepare('SELECT * FROM sqlite_master').all());
      expect(cannotOpen.code).toBe('SQLITE_CANTOPEN');
      expect(storeError('x', cannotOpen.error).message).toMatch(/^Cannot open the store x \(.+\): check that its folder exists and is writable\.$/);
      // Full: the file may not grow past max_page_count.
      const small = connect(join(dir, 'small.sqlite'));
      small.exec('CREATE TABLE t (x); PRAGMA max_page_count = 8');
      const full = failure(() => {
        for (let i = 0; i < 100; i++) small.prepare('INSERT INTO t VALUES ($1)').run(['x'.repeat(4000)]);
      });
      expect(full.code).toBe('SQLITE_FULL');
      expect(storeError('x', full.error).message).toMatch(/^The disk holding the store x is full \(.+\): nothing was written\./);
      // Read-only: what a user without write access to the store's folder meets, even reading (WAL).
      const readOnly = failure(() => connect(join(dir, 'small.sqlite'), true).exec("INSERT INTO t VALUES ('x')"));
      expect(readOnly.code).toBe('SQLITE_READONLY');
      expect(storeError('x', readOnly.error).message).toMatch(
        /^The store x is read-only to this user \(.+\): SQLite writes beside the file \(its -wal and -shm\) even to read it\. Run as the user that owns the store/,
      );
      // Busy: another connection holds the write lock past the timeout.
      const holder = connect(join(dir, 'busy.sqlite'));
      holder.exec('PRAGMA journal_mode = WAL; CREATE TABLE t (x); BEGIN IMMEDIATE');
      const waiter = connect(join(dir, 'busy.sqlite'));
      waiter.pragma('busy_timeout = 20');
      expect(failure(() => waiter.exec('BEGIN IMMEDIATE')).code).toBe('SQLITE_BUSY');
      holder.exec('COMMIT');
      // A constraint, an extended code (SQLITE_CONSTRAINT_UNIQUE) reduced to its primary one.
      holder.exec('CREATE TABLE u (k TEXT PRIMARY KEY)');
      expect(failure(() => holder.exec("INSERT INTO u VALUES ('a'); INSERT INTO u VALUES ('a')")).code).toBe('SQLITE_CONSTRAINT');
      // Damaged pages past the header.
      const big = connect(join(dir, 'big.sqlite'));
      big.exec(
        'CREATE TABLE t (x); INSERT INTO t SELECT hex(randomblob(200)) FROM json_each(json_array(' + Array.from({ length: 400 }, (_, i) => i).join(',') + '))',
      );
      big.close();
      const handle = await open(join(dir, 'big.sqlite'), 'r+');
      await handle.write(Buffer.alloc(8192, 0x5a), 0, undefined, 8192);
      await handle.close();
      const corrupt = failure(() => connect(join(dir, 'big.sqlite')).prepare('SELECT count(*), max(length(x)) FROM t').all());
      expect(corrupt.code).toBe('SQLITE_CORRUPT');
      expect(storeError('x', corrupt.error).message).toMatch(/^The store x is damaged \(/);
      // Not SQLite's: a value that cannot be bound, anything else.
      expect(failure(() => holder.prepare('INSERT INTO u VALUES ($1)').run([{}])).code).toBeUndefined();
      expect(sqliteErrorCode(new Error('x'))).toBeUndefined();
      expect(sqliteErrorCode(undefined)).toBeUndefined();
    });

    it('keeps a store that another driver wrote', async () => {
      const dir = await tempDir('ck-driver-');
      const first = new SqliteStore({ dir, driver: name });
      await first.open();
      await first.insertEvent(sampleEvent('evt_1', { body: '{"a":1}' }));
      await first.close();
      for (const other of DRIVERS.filter((entry) => entry.driver)) {
        const reopened = new SqliteStore({ dir, driver: other.name, readonly: true });
        await reopened.open();
        expect((await reopened.getEvent('evt_1'))?.body).toBe('{"a":1}');
        expect(reopened.integrityCheck()).toEqual(['ok']);
        await reopened.close();
      }
      expect((await readFile(join(dir, 'store.sqlite'))).subarray(0, 15).toString()).toBe('SQLite format 3');
    });
  });

  // The default driver runs the whole contract in sqlite.test.ts; the other one, where it loads, here.
  if (driver && name !== loadDriver().name) {
    storeContract(`SqliteStore (file, ${name})`, async () => {
      const store = new SqliteStore({ dir: await tempDir(), driver: name });
      await store.open();
      return { store, cleanup: () => store.close() };
    });
  }
}

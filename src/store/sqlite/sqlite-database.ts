import { accessSync, constants, statfsSync } from 'node:fs';
import { open as openFile, type FileHandle } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { StoreError } from '../../errors/index.js';
import type { Database, Queryable, QueryResult, Statement } from '../sql/database.js';
import { isDamage, loadDriver, sqliteErrorCode, withJournals, type SqliteConnection, type SqliteDriverName, type SqliteStatement } from './driver.js';

export interface SqliteDatabaseOptions {
  /** The database file, or `:memory:` (nothing kept, one connection). */
  path: string;
  /** Open an existing store for reading only: refuse one that does not exist, create nothing. @default false */
  readonly?: boolean | undefined;
  /** How long a write waits for another process's transaction before it fails. @default 5000 */
  busyTimeoutMs?: number | undefined;
  /** The SQLite driver. @default node:sqlite where this Node has it (22.16 and later), else better-sqlite3 (see `SqliteDriverName`). */
  driver?: SqliteDriverName | undefined;
}

/** A database that gathers the writes of one event-loop turn into one transaction. */
export interface SqliteDatabase extends Database {
  /** The writer connection, for what only SQLite has (backup, integrity check). */
  readonly connection: SqliteConnection;
}

interface Unit {
  work(tx: Queryable): unknown;
  /** A transaction of several statements (a savepoint of its own), rather than one statement. */
  several: boolean;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}
type Settled = { unit: Unit; ok: boolean; value: unknown };

/** What went wrong with the file, and what to do about it, in one line. */
export function storeError(path: string, error: unknown): StoreError {
  const code = sqliteErrorCode(error);
  const message = (error as Error).message;
  if (isDamage(error)) {
    return new StoreError(
      `The store ${path} is damaged (${message}). The file was left untouched. Restore the latest backup (\`checkout-kit store restore <file>\`), or move the folder aside to start with an empty store; then \`checkout-kit reconcile\` catches up.`,
      { cause: error },
    );
  }
  // A disk with no room at all fails even SQLite's shared-memory file: an I/O error, not SQLITE_FULL.
  if (code === 'SQLITE_FULL' || (code === 'SQLITE_IOERR' && noRoomFor(path)))
    return new StoreError(`The disk holding the store ${path} is full (${message}): nothing was written. Free some space; writes resume by themselves.`, {
      cause: error,
      reason: 'disk_full',
    });
  if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') {
    return new StoreError(
      `The store ${path} is busy: another process kept its write lock past the busy timeout (${message}). Nothing was written: try again (a webhook answered 503 is sent again by the service).`,
      { cause: error, reason: 'busy' },
    );
  }
  // Permissions show as a read-only database, a file SQLite cannot open, or (a file made read-only
  // under a running process) a failed write: what the file system says settles which.
  if (code === 'SQLITE_READONLY' || code === 'SQLITE_CANTOPEN' || code === 'SQLITE_IOERR') {
    const places = notWritable(path);
    if (places.length > 0) return unwritableError(path, places, `SQLite: ${message}`, error);
  }
  if (code === 'SQLITE_READONLY') {
    return new StoreError(
      `The store ${path} is read-only to this user (${message}): SQLite writes beside the file (its -wal and -shm) even to read it. Run as the user that owns the store, or give this one write access to its folder.`,
      { cause: error },
    );
  }
  if (code === 'SQLITE_CANTOPEN')
    return new StoreError(`Cannot open the store ${path} (${message}): check that its folder exists and is writable.`, { cause: error });
  return new StoreError(`The store ${path} failed: ${message}.`, { cause: error });
}

/** Whether the file system holding `path` has no room left for this user. */
function noRoomFor(path: string): boolean {
  if (path === ':memory:') return false;
  try {
    return statfsSync(dirname(path)).bavail === 0;
  } catch {
    return false;
  }
}

/** A place of the store that cannot be written, and why (`access(2)`'s code: EACCES, EPERM, EROFS). */
interface Unwritable {
  place: string;
  code: string;
}

/** Which of the store's folder, file and journals `access(2)` says cannot be written (root too is refused an immutable file or a read-only mount). */
function notWritable(path: string): Unwritable[] {
  if (path === ':memory:') return [];
  const folder = dirname(path);
  return [folder, ...withJournals(path)].flatMap((place) => {
    try {
      accessSync(place, constants.W_OK);
      return [];
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'EACCES';
      return code === 'ENOENT' ? [] : [{ place: place === folder ? `its folder ${folder}` : basename(place), code }];
    }
  });
}

/** The store cannot be written: where, and what to do. A read-only mount (often after disk errors) is a matter of the disk, not of owners. */
function unwritableError(path: string, places: readonly Unwritable[], detail: string, cause: unknown, final = false): StoreError {
  const names = places.map((entry) => entry.place).join(', ');
  const what = places.some((entry) => entry.code === 'EROFS')
    ? `The store ${path} is on a file system mounted read-only (not writable: ${names}; ${detail}). Check the disk (\`dmesg\`) and how it is mounted.`
    : `The store ${path} is not writable by this user (not writable: ${names}; ${detail}). Check the owner and permissions of the store's folder and files (\`ls -l\`; \`lsattr\` shows an immutable file), and run checkout-kit as the user that owns them.`;
  return new StoreError(final ? `${what} Nothing more is written by this process: restart it once that is fixed.` : what, { cause });
}

const journalMode = (connection: SqliteConnection) => connection.pragma('journal_mode')[0]?.journal_mode;

/**
 * SQLite shaped for a receiver. Both drivers are synchronous, so what matters is how much of the
 * event loop a burst's commits take: every write of one turn waits for the turn's end and is
 * committed with the others in one transaction. The commit writes the WAL (`synchronous = NORMAL`),
 * then the WAL is fdatasync'd on the thread pool, and only then does any of its promises settle:
 * what is acknowledged is on disk, as with `FULL`, but the loop goes on answering while the disk
 * works (group commit: one sync in flight). Unlike `FULL`, another connection may read a commit
 * before its sync; what acts on it for good writes first (a claim), and that write's sync covers
 * every frame before it, since the WAL is appended in order. SQLite's automatic checkpoint still
 * runs inside a commit, on the loop. While another process holds the write lock, writes wait for
 * it off the loop (`beginWrite`). Reads go to a second connection, which sees only what is
 * committed; `:memory:` has one connection (nothing to sync), and a read waits for a commit.
 */
export function sqliteDatabase(options: SqliteDatabaseOptions): SqliteDatabase {
  const driver = loadDriver(options.driver);
  const memory = options.path === ':memory:';
  const busyTimeout = options.busyTimeoutMs ?? 5000;
  /** Whether `connection` commits without syncing, leaving the WAL's sync to `syncWal`: a writer of a file in WAL mode. */
  const syncsItself = (connection: SqliteConnection, reading: boolean) => !memory && !reading && journalMode(connection) === 'wal';
  /** A connection set up for writing, or (`reading`) opened read-only and kept from writing. */
  const setUp = (reading: boolean): SqliteConnection => {
    const connection = driver.open(options.path, { readonly: reading });
    try {
      // Set-up may wait for another process (switching a new file to WAL takes the lock for a moment).
      connection.pragma(`busy_timeout = ${busyTimeout}`);
      // WAL stays with the file: only a new file is switched, which takes no lock once done.
      if (!memory && !reading && journalMode(connection) !== 'wal') connection.pragma('journal_mode = WAL');
      // A writer in WAL mode commits without syncing on the event loop: `syncWal` syncs the WAL before
      // anything is acknowledged. Anywhere else (a file SQLite would not switch to WAL), FULL. Set on
      // each connection: better-sqlite3 reopens a WAL file with NORMAL.
      connection.pragma(`synchronous = ${syncsItself(connection, reading) ? 'NORMAL' : 'FULL'}`);
      if (reading) connection.pragma('query_only = ON');
      // From then on the writer never waits inside SQLite for another process's lock: that wait would
      // hold the event loop (no acknowledgement, no timer) for as long as the other transaction lasts.
      // `beginWrite` waits for it between tries instead. Readers rarely wait at all (WAL).
      else connection.pragma('busy_timeout = 0');
      return connection;
    } catch (error) {
      connection.close();
      throw error;
    }
  };
  const open = (reading: boolean): SqliteConnection => {
    const deadline = Date.now() + busyTimeout;
    for (;;) {
      try {
        return setUp(reading);
      } catch (error) {
        // Processes opening a new file together: SQLite answers BUSY at once, without calling its
        // busy handler, to whichever loses the race to switch it to WAL. Opening is rare; wait, retry.
        if (sqliteErrorCode(error) === 'SQLITE_BUSY' && Date.now() < deadline) {
          Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10 + Math.random() * 40);
          continue;
        }
        throw storeError(options.path, error);
      }
    }
  };
  /** Once a sync has failed or damage was found: what every later write is refused with (see `syncWal`, `run`). */
  let broken: StoreError | undefined;
  const writer = open(Boolean(options.readonly));
  const reader = memory ? writer : open(true);
  const prepared = new Map([writer, reader].map((connection) => [connection, new Map<string, SqliteStatement>()]));

  const run = <R>(connection: SqliteConnection, { text, values = [] }: Statement): QueryResult<R> => {
    const cache = prepared.get(connection)!;
    try {
      const statement = cache.get(text) ?? connection.prepare(text);
      cache.set(text, statement);
      if (statement.returnsRows) {
        const rows = statement.all(values) as R[];
        return { rows, rowCount: rows.length };
      }
      return { rows: [], rowCount: statement.run(values).changes };
    } catch (error) {
      if (sqliteErrorCode(error) === undefined) throw error;
      const failure = storeError(options.path, error);
      // Damage found is final: nothing more is written to the file, and readiness's write probe says so.
      if (isDamage(error)) broken ??= failure;
      throw failure;
    }
  };
  const tx: Queryable = { query: async (statement) => run(writer, statement) };

  const queue: Unit[] = [];
  let scheduled = false;
  let committing: Promise<void> | undefined;
  let closed = false;
  const closedError = () => new StoreError(`The store ${options.path} is closed.`);

  const enqueue = (work: Unit['work'], several: boolean) =>
    new Promise<unknown>((resolve, reject) => {
      if (closed) return reject(closedError());
      if (broken) return reject(broken);
      queue.push({ work, several, resolve, reject });
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    });

  /**
   * Take the write lock (`BEGIN IMMEDIATE`). While another process holds it, try again after a
   * short wait, off the event loop, for up to `busyTimeoutMs`; writes asked for meanwhile join
   * `units`, so a wait costs one commit, not one per write. True once taken, else the last error.
   */
  async function beginWrite(units: Unit[]): Promise<true | unknown> {
    const deadline = Date.now() + busyTimeout;
    for (let pause = 1; ; pause = Math.min(pause * 2, 4)) {
      try {
        writer.exec('BEGIN IMMEDIATE');
        return true;
      } catch (error) {
        if (sqliteErrorCode(error) !== 'SQLITE_BUSY' || Date.now() >= deadline) return error;
      }
      await new Promise((resolve) => setTimeout(resolve, pause));
      units.push(...queue.splice(0));
    }
  }

  /**
   * Run `units` in one write transaction, each one's outcome into `settled`. Resolves what undid
   * them all, if anything did: the lock not taken, the transaction rolled back, the commit refused.
   */
  async function write(units: Unit[], settled: Settled[]): Promise<unknown> {
    const began = await beginWrite(units);
    if (began !== true) return storeError(options.path, began);
    for (const unit of units) {
      if (unit.several) writer.exec('SAVEPOINT unit');
      try {
        const value = unit.several ? await unit.work(tx) : unit.work(tx);
        if (unit.several) writer.exec('RELEASE unit');
        settled.push({ unit, ok: true, value });
      } catch (error) {
        if (unit.several && writer.inTransaction) writer.exec('ROLLBACK TO unit; RELEASE unit');
        settled.push({ unit, ok: false, value: error });
      }
      // A full disk or an I/O error may roll back the whole transaction, not just the statement.
      if (!writer.inTransaction) return settled.at(-1)?.value ?? new StoreError('The transaction was rolled back.');
    }
    try {
      writer.exec('COMMIT');
    } catch (error) {
      const failure = storeError(options.path, error);
      if (writer.inTransaction) writer.exec('ROLLBACK');
      return failure;
    }
    return undefined;
  }

  /**
   * The WAL the writer commits to, as SQLite names it (after the database file's real path, links
   * resolved), when the writer's commits leave its sync to `syncWal`; else undefined.
   */
  const walPath = syncsItself(writer, Boolean(options.readonly))
    ? `${String(writer.pragma('database_list').find((row) => row.name === 'main')?.file)}-wal`
    : undefined;
  let wal: FileHandle | undefined;
  /**
   * Put the WAL's committed frames on disk (fdatasync, on the thread pool); what undid the sync, if
   * anything did. Every commit syncs, one that changed nothing too: a claim that matched no row
   * has read frames another connection may not have synced yet.
   *
   * A failed sync is final for this process. The frames are committed and visible, and the kernel
   * may report a write-back error once and then count the pages clean, so a later sync that
   * succeeds proves nothing about them: every later write is refused until the store is reopened.
   */
  async function syncWal(): Promise<unknown> {
    if (walPath === undefined) return undefined;
    try {
      wal ??= await openFile(walPath, 'r+');
      await wal.datasync();
      return undefined;
    } catch (error) {
      // The WAL refused to this user (or on a read-only mount) says so; final all the same, as any failed sync.
      const code = (error as NodeJS.ErrnoException).code;
      const places = wal === undefined && (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') ? notWritable(options.path) : [];
      broken =
        places.length > 0
          ? unwritableError(options.path, places, `its write-ahead log could not be opened to sync it: ${(error as Error).message}`, error, true)
          : new StoreError(
              `The store ${options.path} could not sync its write-ahead log (${(error as Error).message}): the last writes are committed but may not be on disk, and nothing more is written. Check the disk, then restart the process to reopen the store.`,
              { cause: error },
            );
      await wal?.close().catch(() => undefined);
      wal = undefined;
      return broken;
    }
  }

  async function flush(): Promise<void> {
    if (committing) await committing;
    scheduled = false;
    const units = queue.splice(0);
    if (units.length === 0) return;
    let done!: () => void;
    committing = new Promise((resolve) => (done = resolve));
    const settled: Settled[] = [];
    let failure: unknown;
    try {
      // A batch whose every unit failed acknowledges nothing: no sync, so each keeps its own error.
      failure = broken ?? (await write(units, settled)) ?? (settled.some((done) => done.ok) ? await syncWal() : undefined);
    } catch (error) {
      failure = error;
    } finally {
      committing = undefined;
      done();
    }
    if (failure !== undefined) for (const unit of units) unit.reject(failure);
    else for (const { unit, ok, value } of settled) (ok ? unit.resolve : unit.reject)(value);
  }

  return {
    description: memory ? 'SQLite in memory (nothing is kept after exit)' : `SQLite ${options.path}`,
    connection: writer,
    async query<R>(statement: Statement): Promise<QueryResult<R>> {
      if (/^\s*SELECT\b/i.test(statement.text)) {
        if (closed) throw closedError();
        if (memory && committing) await committing;
        return run<R>(reader, statement);
      }
      return enqueue(() => run<R>(writer, statement), false) as Promise<QueryResult<R>>;
    },
    transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T> {
      return enqueue(work, true) as Promise<T>;
    },
    async close() {
      closed = true;
      while (scheduled || committing) await (committing ?? new Promise((resolve) => setImmediate(resolve)));
      try {
        await wal?.close();
      } finally {
        if (reader !== writer) reader.close();
        writer.close();
      }
    },
  };
}

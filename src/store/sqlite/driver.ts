import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';
import { ConfigError, StoreError } from '../../errors/index.js';

/**
 * The SQLite driver. `node:sqlite` (Node 22.16 and later) needs nothing installed and is as fast for
 * the store (test/bench/HISTORY.md, "SQLite drivers"). better-sqlite3 12, an optional peer with a
 * native addon, is for an older Node only: built for Node 24 it aborts the process when a statement
 * is garbage-collected (`Assertion failed: (env) != nullptr`), and 13, which does not, cannot load on Node 20.
 */
export type SqliteDriverName = 'node:sqlite' | 'better-sqlite3';

/** A prepared statement. Parameters are `$1`, `$2`…, bound from `values` in order. */
export interface SqliteStatement {
  /** Whether running it yields rows: a SELECT, a statement with RETURNING, a PRAGMA that answers. */
  readonly returnsRows: boolean;
  all(values?: readonly unknown[]): Array<Record<string, unknown>>;
  run(values?: readonly unknown[]): { changes: number };
}

/** One connection to a database file, or to a database in memory. */
export interface SqliteConnection {
  readonly driver: SqliteDriverName;
  prepare(sql: string): SqliteStatement;
  /** Run one or several statements (`;`-separated), without parameters. */
  exec(sql: string): void;
  /** `PRAGMA <text>`, and the rows it answers (none for most settings). */
  pragma(text: string): Array<Record<string, unknown>>;
  /** Whether a transaction is open (a failed statement, such as a full disk, may have rolled it back). */
  readonly inTransaction: boolean;
  /** A consistent copy of the whole database in the file `destination` (SQLite's online backup API). */
  backup(destination: string): Promise<void>;
  close(): void;
}

export interface SqliteDriver {
  readonly name: SqliteDriverName;
  /**
   * Open `path` (or `:memory:`); `readonly`: an existing file, for reading only (nothing created or
   * written). Throws the driver's error (see `sqliteErrorCode`) when it cannot.
   */
  open(path: string, options?: { readonly?: boolean | undefined }): SqliteConnection;
}

// SQLite's primary result codes, by number (https://sqlite.org/rescode.html): node:sqlite gives the number.
const PRIMARY_CODES = [
  'OK',
  'ERROR',
  'INTERNAL',
  'PERM',
  'ABORT',
  'BUSY',
  'LOCKED',
  'NOMEM',
  'READONLY',
  'INTERRUPT',
  'IOERR',
  'CORRUPT',
  'NOTFOUND',
  'FULL',
  'CANTOPEN',
  'PROTOCOL',
  'EMPTY',
  'SCHEMA',
  'TOOBIG',
  'CONSTRAINT',
  'MISMATCH',
  'MISUSE',
  'NOLFS',
  'AUTH',
  'FORMAT',
  'RANGE',
  'NOTADB',
  'NOTICE',
  'WARNING',
];

/**
 * SQLite's primary result code of either driver's failure (`SQLITE_IOERR_WRITE` reduced to
 * `SQLITE_IOERR`); `undefined` for an error that is not SQLite's (a value that cannot be bound, a closed connection).
 */
export function sqliteErrorCode(error: unknown): string | undefined {
  const { code, errcode } = (error ?? {}) as { code?: unknown; errcode?: unknown };
  // node:sqlite: code ERR_SQLITE_ERROR, errcode the (extended) result code.
  if (code === 'ERR_SQLITE_ERROR' && typeof errcode === 'number') return `SQLITE_${PRIMARY_CODES[errcode & 0xff] ?? 'ERROR'}`;
  // better-sqlite3: a SqliteError whose code is the (extended) result code's name.
  if (typeof code === 'string' && (error as Error).name === 'SqliteError') return /^SQLITE_[A-Z]+/.exec(code)?.[0];
  return undefined;
}

/** Whether a driver's failure says the file is damaged or not a database. */
export function isDamage(error: unknown): boolean {
  const code = sqliteErrorCode(error);
  return code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT';
}

/** A database file and the journals SQLite writes beside it, named after it. */
export const withJournals = (path: string): [string, ...string[]] => [path, `${path}-journal`, `${path}-wal`, `${path}-shm`];

/** Either driver's prepared statement, its parameters bound in order (`?`). */
interface DriverStatement {
  all(...values: unknown[]): unknown[];
  run(...values: unknown[]): { changes: number | bigint };
}

/**
 * The store's SQL (`$1`…, as PostgreSQL takes it) with each parameter an anonymous `?`, and which
 * value each takes, in order. Bound by name instead, node:sqlite looks every name up among all of
 * the statement's: a batch of 200 events (1,800 values) or a page of a copy took seconds.
 */
function positional(sql: string): { text: string; order: number[] } {
  const order: number[] = [];
  // Quoted text and comments are passed over: a `$1` there is not a parameter.
  const text = sql.replace(/'(?:[^']|'')*'|"(?:[^"]|"")*"|--[^\n]*|\/\*[\s\S]*?\*\/|\$(\d+)/g, (match, number: string | undefined) => {
    if (number === undefined) return match;
    order.push(Number(number));
    return '?';
  });
  return { text, order };
}

/** Booleans are stored as 1/0, `undefined` as NULL. */
const storable = (value: unknown) => (typeof value === 'boolean' ? Number(value) : (value ?? null));

/**
 * `sql` prepared with positional parameters (see `positional`). `named` goes first: node:sqlite takes a first argument that is an
 * object for its named parameters, so a value that is one (which cannot be bound) must not be taken so.
 */
function statement<S extends DriverStatement>(
  sql: string,
  prepare: (text: string) => S,
  returnsRows: (prepared: S) => boolean,
  named: [object] | [] = [],
): SqliteStatement {
  const { text, order } = positional(sql);
  const prepared = prepare(text);
  const bind = (values: readonly unknown[] = []) => [...named, ...order.map((number) => storable(values[number - 1]))];
  return {
    returnsRows: returnsRows(prepared),
    all: (values) => prepared.all(...bind(values)) as Array<Record<string, unknown>>,
    run: (values) => ({ changes: Number(prepared.run(...bind(values)).changes) }),
  };
}

/** A driver, once a first connection (in memory) shows it whole: better-sqlite3 loads its addon only then, and an older node:sqlite lacks what the store uses. */
function driver(name: SqliteDriverName, open: (path: string, readonly: boolean) => SqliteConnection): SqliteDriver {
  const probe = open(':memory:', false);
  try {
    if (typeof probe.inTransaction !== 'boolean' || !probe.prepare('SELECT 1').returnsRows)
      throw new Error(`${name} is not complete in Node ${process.version}`);
  } finally {
    probe.close();
  }
  return { name, open: (path, options = {}) => open(path, Boolean(options.readonly)) };
}

// --- node:sqlite --------------------------------------------------------------------------------
// Typed here rather than from @types/node, whose Node 20 types have no node:sqlite.

interface NodeStatement extends DriverStatement {
  columns(): unknown[];
}
interface NodeDatabase {
  prepare(sql: string): NodeStatement;
  exec(sql: string): void;
  close(): void;
  readonly isTransaction: boolean;
}
interface NodeSqlite {
  /** The class's name from Node 26.11 on; `DatabaseSync` (the same class there) before. */
  Database?: new (path: string, options?: { readOnly?: boolean }) => NodeDatabase;
  DatabaseSync: new (path: string, options?: { readOnly?: boolean }) => NodeDatabase;
  backup?: (source: NodeDatabase, destination: string) => Promise<number>;
}

/** node:sqlite, when this Node has it, without Node 22's `ExperimentalWarning` on loading it: the merchant did not choose the module and can do nothing about it. */
function nodeSqlite(): NodeSqlite | undefined {
  const emitWarning = process.emitWarning;
  process.emitWarning = function (this: unknown, warning: string | Error, ...rest: unknown[]) {
    const text = typeof warning === 'string' ? warning : warning.message;
    if (/^SQLite is an experimental feature/.test(text)) return;
    return (emitWarning as (...args: unknown[]) => void).call(process, warning, ...rest);
  } as typeof process.emitWarning;
  try {
    // Node 20 has no such module; 22.5 to 22.12 only behind --experimental-sqlite.
    return process.getBuiltinModule?.('node:sqlite') as NodeSqlite | undefined;
  } finally {
    process.emitWarning = emitWarning;
  }
}

function nodeSqliteDriver(): SqliteDriver {
  const sqlite = nodeSqlite();
  // `backup` came with Node 22.16 (and 23.8); `driver` checks the rest.
  if (typeof sqlite?.backup !== 'function') throw new Error(`node:sqlite is not available (or not complete) in Node ${process.version}`);
  const Database = sqlite.Database ?? sqlite.DatabaseSync;
  const backup = sqlite.backup;
  return driver('node:sqlite', (path, readonly) => {
    const db = new Database(path, { readOnly: readonly });
    return {
      driver: 'node:sqlite',
      prepare: (sql) =>
        statement(
          sql,
          (text) => db.prepare(text),
          (prepared) => prepared.columns().length > 0,
          [{}],
        ),
      exec: (sql) => db.exec(sql),
      pragma: (text) => db.prepare(`PRAGMA ${text}`).all() as Array<Record<string, unknown>>,
      get inTransaction() {
        return db.isTransaction;
      },
      backup: async (destination) => {
        await backup(db, destination);
      },
      close: () => db.close(),
    };
  });
}

// --- better-sqlite3 -----------------------------------------------------------------------------

function betterSqlite3Driver(): SqliteDriver {
  const Driver = createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3;
  return driver('better-sqlite3', (path, readonly) => {
    const db = new Driver(path, { readonly, fileMustExist: readonly });
    return {
      driver: 'better-sqlite3',
      prepare: (sql) =>
        statement(
          sql,
          (text) => db.prepare(text),
          (prepared) => prepared.reader,
        ),
      exec: (sql) => void db.exec(sql),
      pragma: (text) => db.pragma(text) as Array<Record<string, unknown>>,
      get inTransaction() {
        return db.inTransaction;
      },
      backup: async (destination) => {
        await db.backup(destination);
      },
      close: () => void db.close(),
    };
  });
}

// --- choosing ------------------------------------------------------------------------------------

/** Whether Node `version` has `node:sqlite` without a flag and as fast as the store needs (22.16, 23.8 and later). */
export function nodeHasSqlite(version: string = process.versions.node): boolean {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  return major > 23 || (major === 23 && minor >= 8) || (major === 22 && minor >= 16);
}

const NODE_HAS_SQLITE = nodeHasSqlite();

const loaded = new Map<SqliteDriverName, SqliteDriver | Error>();

function tryLoad(name: SqliteDriverName): SqliteDriver | Error {
  if (!loaded.has(name)) {
    try {
      loaded.set(name, name === 'node:sqlite' ? nodeSqliteDriver() : betterSqlite3Driver());
    } catch (error) {
      loaded.set(name, error as Error);
    }
  }
  return loaded.get(name)!;
}

// 12: 13 needs Node 22 (on Node 20 it crashes on loading).
const INSTALL_BETTER_SQLITE3 =
  'install the better-sqlite3 package: run `npm install better-sqlite3@12` (npm 11: approve its install script with `npm install-scripts approve better-sqlite3`).';

/** The driver `name`, else node:sqlite where this Node has it, else better-sqlite3; else a `ConfigError` saying what to install. */
export function loadDriver(name?: SqliteDriverName): SqliteDriver {
  if (name === 'node:sqlite' || name === 'better-sqlite3') {
    const driver = tryLoad(name);
    if (!(driver instanceof Error)) return driver;
    throw new StoreError(
      name === 'better-sqlite3'
        ? `The embedded store was asked for better-sqlite3, which cannot be loaded: ${INSTALL_BETTER_SQLITE3}`
        : NODE_HAS_SQLITE
          ? nodeSqliteFailed(driver)
          : `The embedded store was asked for node:sqlite, which Node ${process.version} does not have (Node 22.16 or later has it).`,
      { cause: driver },
    );
  }
  const builtIn = tryLoad('node:sqlite');
  if (!(builtIn instanceof Error)) return builtIn;
  const addon = tryLoad('better-sqlite3');
  if (!(addon instanceof Error)) return addon;
  // Where Node has node:sqlite, its failure is the one to tell: better-sqlite3 is not the remedy.
  if (NODE_HAS_SQLITE) throw new StoreError(nodeSqliteFailed(builtIn), { cause: builtIn });
  throw new NoSqliteError(
    `The embedded store needs SQLite: Node 22.16 or later has it built in (node:sqlite); on Node ${process.version}, ${INSTALL_BETTER_SQLITE3}`,
    { cause: addon },
  );
}

/** Neither SQLite driver is there: something to install, as a missing optional peer is (a `ConfigError`: the CLI exits 2). */
class NoSqliteError extends ConfigError {
  override name = 'NoSqliteError';
}

function nodeSqliteFailed(error: Error): string {
  return `The embedded store could not use node:sqlite, which Node ${process.version} has built in: ${error.message}`;
}

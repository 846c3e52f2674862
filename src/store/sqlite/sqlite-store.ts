import { existsSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { StoreError } from '../../errors/index.js';
import { sqliteDialect } from '../sql/dialect.js';
import { migrationsTable } from '../sql/migrate.js';
import { MIGRATIONS } from '../sql/migrations.js';
import { SqlStore } from '../sql/sql-store.js';
import type { SqliteConnection, SqliteDriverName } from './driver.js';
import { sqliteDatabase, type SqliteDatabase, type SqliteDatabaseOptions } from './sqlite-database.js';

/** The file inside an embedded store's folder. */
export const STORE_FILE = 'store.sqlite';

/** Where the store is, and how its database is opened. */
export interface SqliteStoreOptions extends Omit<SqliteDatabaseOptions, 'path'> {
  /** The store's folder (created on open unless `readonly`), holding `store.sqlite`; omit for a store in memory. */
  dir?: string | undefined;
}

/**
 * The embedded store: one SQLite file in a folder (`file:.checkout-kit` holds
 * `.checkout-kit/store.sqlite`), which `serve`, a cron `reconcile` and the CLI on the same host
 * share. Without a folder it lives in memory: for tests and throwaway runs.
 *
 * @example
 * const store = new SqliteStore({ dir: '.checkout-kit' });
 * await store.open();
 */
export class SqliteStore extends SqlStore {
  /** The database file, or `:memory:`. */
  readonly file: string;
  /** The SQLite driver that opened it. */
  readonly driver: SqliteDriverName;
  private readonly sqlite: SqliteDatabase;

  constructor(options: SqliteStoreOptions = {}) {
    const file = options.dir === undefined ? ':memory:' : join(options.dir, STORE_FILE);
    if (options.dir !== undefined) prepareFolder(options.dir, file, Boolean(options.readonly));
    const database = sqliteDatabase({ ...options, path: file });
    super({ database, dialect: sqliteDialect, schema: file, migrate: !options.readonly });
    this.file = file;
    this.driver = database.connection.driver;
    this.sqlite = database;
    // A store in memory is ready once made, like any object (SQLite answers synchronously): `open()` then finds it current.
    if (options.dir === undefined) migrateNow(database.connection);
  }

  /**
   * An online, consistent copy of the store in one file (SQLite's backup API): safe while `serve`
   * writes. Resolves once the copy is complete.
   */
  async backup(destination: string): Promise<void> {
    mkdirSync(dirname(destination), { recursive: true });
    // Written beside it, then renamed into place: a backup cut short never damages the last good one.
    const partial = `${destination}.partial-${process.pid}`;
    try {
      await this.sqlite.connection.backup(partial);
      renameSync(partial, destination);
    } finally {
      for (const leftover of [partial, `${partial}-journal`, `${partial}-wal`, `${partial}-shm`]) rmSync(leftover, { force: true });
    }
  }

  /** SQLite's own check of the file: `['ok']` when it is sound, else what is damaged. */
  integrityCheck(): string[] {
    try {
      return this.sqlite.connection.pragma('integrity_check').map((row) => String(row.integrity_check));
    } catch (error) {
      // Damage bad enough that the check itself cannot read the file.
      return [(error as Error).message];
    }
  }
}

/** Apply every migration to a new database in memory, at once (no transaction: nothing else can see it). */
function migrateNow(connection: SqliteConnection): void {
  connection.exec([migrationsTable(sqliteDialect), ...MIGRATIONS.flatMap((migration) => migration.statements(sqliteDialect))].join(';\n'));
  const applied = connection.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)');
  for (const migration of MIGRATIONS) applied.run([migration.version, migration.name, new Date().toISOString()]);
}

/** Make the store's folder (or, read-only, make sure the store is there), with a clear error when that cannot be. */
function prepareFolder(dir: string, file: string, readonly: boolean): void {
  const isAFile = (cause?: unknown) =>
    new StoreError(
      `Cannot open the store ${dir}: it (or a folder above it) is a file, not a folder. Point the store at a folder (CHECKOUT_STORE=file:<dir>).`,
      { cause },
    );
  if (readonly) {
    if (existsSync(file)) return;
    if (existsSync(dir) && !statSync(dir).isDirectory()) throw isAFile();
    throw new StoreError(`No store at ${dir}: nothing has been stored there yet (is CHECKOUT_STORE right?).`);
  }
  try {
    mkdirSync(dir, { recursive: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw code === 'EEXIST' || code === 'ENOTDIR' ? isAFile(error) : error;
  }
}

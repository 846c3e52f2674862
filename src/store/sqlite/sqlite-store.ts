import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { StoreError } from '../../errors/index.js';
import { sqliteDialect } from '../sql/dialect.js';
import { SqlStore } from '../sql/sql-store.js';
import { sqliteDatabase, type SqliteDatabase } from './sqlite-database.js';

/** The file inside an embedded store's folder. */
export const STORE_FILE = 'store.sqlite';

export interface SqliteStoreOptions {
  /** The store's folder (created on open unless `readonly`), holding `store.sqlite`; omit for a store in memory. */
  dir?: string | undefined;
  /** Open an existing store for reading only: refuse one that does not exist, create nothing. @default false */
  readonly?: boolean | undefined;
  /** How long a write waits for another process's transaction. @default 5000 */
  busyTimeoutMs?: number | undefined;
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
  private readonly sqlite: SqliteDatabase;

  constructor(options: SqliteStoreOptions = {}) {
    const file = options.dir === undefined ? ':memory:' : join(options.dir, STORE_FILE);
    if (options.dir !== undefined) {
      if (options.readonly && !existsSync(file)) {
        throw new StoreError(`No store at ${options.dir}: nothing has been stored there yet (is CHECKOUT_STORE right?).`);
      }
      if (!options.readonly) mkdirSync(options.dir, { recursive: true });
    }
    const database = sqliteDatabase({ path: file, readonly: options.readonly, busyTimeoutMs: options.busyTimeoutMs });
    super({ database, dialect: sqliteDialect, schema: file, migrate: !options.readonly });
    this.file = file;
    this.sqlite = database;
  }

  /**
   * An online, consistent copy of the store in one file (SQLite's backup API): safe while `serve`
   * writes. Resolves once the copy is complete.
   */
  async backup(destination: string): Promise<void> {
    await this.sqlite.connection.backup(destination);
  }

  /** SQLite's own check of the file: `['ok']` when it is sound, else what is damaged. */
  integrityCheck(): string[] {
    return (this.sqlite.connection.pragma('integrity_check') as Array<{ integrity_check: string }>).map((row) => row.integrity_check);
  }
}

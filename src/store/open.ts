import { stat } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError, NoStoreError } from '../errors/index.js';
import type { Logger } from '../log/index.js';
import { MemoryStore } from './memory-store.js';
import { holdsStore, refuseEarlierFormat, SqliteStore, STORE_FILE } from './sqlite/sqlite-store.js';
import type { Store } from './types.js';

/** How `openStore` resolves and opens the store a URL names. */
export interface OpenStoreOptions {
  /** What a relative `file:` folder is resolved against. @default process.cwd() */
  cwd?: string;
  /** PostgreSQL: open the pool's connections up front and keep them (`PostgresStore`'s `warmPool`). @default false */
  warmPool?: boolean;
  /** Open an existing store for reading only (implies `mustExist`): nothing is created, written or migrated. @default false */
  readonly?: boolean;
  /** PostgreSQL connection warnings. */
  logger?: Logger;
  /**
   * Refuse, with a `ConfigError` naming where it looked, a store that does not exist yet instead of creating
   * it, so a mistyped `CHECKOUT_STORE` does not look like an empty shop (`file:`: `fileStoreExists`;
   * PostgreSQL: `PostgresStore`'s `mustExist`; `memory:` is always new). @default false
   */
  mustExist?: boolean;
  /** What `url` was given as, named in messages that say what to check (e.g. `--to`). @default 'CHECKOUT_STORE' */
  setting?: string;
}

/**
 * Open the store a `CHECKOUT_STORE` URL names: `file:<dir>` (embedded SQLite in that folder;
 * relative to `cwd`, or a `file:///absolute` URL), `memory:` (SQLite in memory, nothing kept),
 * `postgres://…`. Resolves once it is open.
 *
 * @example
 * const store = await openStore('file:.checkout-kit');
 */
export async function openStore(url: string, options: OpenStoreOptions = {}): Promise<Store> {
  const setting = options.setting ?? 'CHECKOUT_STORE';
  if ((options.mustExist || options.readonly) && url.startsWith('file:')) {
    const dir = fileStoreDir(url, options.cwd ?? process.cwd());
    // A file in the folder's place is SqliteStore's to explain; only a plain absence is refused here
    // (an earlier checkout-kit's store in the folder is said to be one).
    if (!(await fileStoreExists(dir)) && !(await fileInTheWay(dir))) {
      refuseEarlierFormat(dir);
      throw new NoStoreError(
        `No store at ${dir} (${setting}=${url}): nothing was ever stored there. Check ${setting}; a relative folder is read from the current directory.`,
      );
    }
  }
  const store = await createStore(url, options);
  try {
    await store.open();
  } catch (error) {
    // What it opened on the way (a pool's connections, a file) must not outlive the failure.
    await store.close().catch(() => undefined);
    throw error;
  }
  return store;
}

async function createStore(
  url: string,
  { cwd = process.cwd(), warmPool = false, readonly = false, mustExist = false, logger, setting }: OpenStoreOptions,
): Promise<Store> {
  if (url.startsWith('memory:')) return new MemoryStore();
  if (url.startsWith('file:')) return new SqliteStore({ dir: fileStoreDir(url, cwd), readonly, setting });
  // Loaded only for a PostgreSQL URL: a command on the embedded store starts without it (and the
  // driver itself, pg, loads only when a PostgresStore connects: see postgres-store.ts).
  if (/^postgres(ql)?:\/\//.test(url)) {
    const { PostgresStore } = await import('./postgres/index.js');
    return new PostgresStore({ connectionString: url, logger, warmPool, migrate: !readonly, mustExist: mustExist || readonly, setting });
  }
  const scheme = /^[a-z][a-z0-9+.-]*:/i.exec(url)?.[0] ?? url.slice(0, 20);
  throw new ConfigError(`Store URL "${scheme}…" is not supported: use file:<dir> (embedded), postgres://… or memory: (tests).`);
}

/** Whether the embedded store in `dir` exists: its SQLite file does, and is not empty. */
export async function fileStoreExists(dir: string): Promise<boolean> {
  return holdsStore(join(dir, STORE_FILE));
}

/** Whether `dir`, or a folder above it, is a file. */
async function fileInTheWay(dir: string): Promise<boolean> {
  try {
    return !(await stat(dir)).isDirectory();
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOTDIR';
  }
}

/** The folder of a `file:` store URL (`file:<dir>` relative to `cwd`, or `file:///absolute/dir`). */
export function fileStoreDir(url: string, cwd: string): string {
  if (url.startsWith('file://')) {
    try {
      return fileURLToPath(url);
    } catch (error) {
      throw new ConfigError(`Store URL ${url} is not a local file URL: use file:<dir> or file:///absolute/dir.`, { cause: error });
    }
  }
  const dir = url.slice('file:'.length);
  if (dir === '') throw new ConfigError('Store URL "file:" names no folder: use file:<dir>, e.g. file:.checkout-kit.');
  return isAbsolute(dir) ? dir : resolve(cwd, dir);
}

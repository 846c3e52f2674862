import { closeSync, copyFileSync, existsSync, fsyncSync, mkdirSync, openSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join, resolve, sep } from 'node:path';
import { InvalidRequestError, StoreError } from '../../errors/index.js';
import { LATEST_VERSION } from '../sql/migrations.js';
import { loadDriver, sqliteErrorCode, type SqliteConnection, type SqliteDriverName } from './driver.js';
import { openElsewhere, openElsewhereMessage } from './open-elsewhere.js';
import { holdsStore, integrityFindings, isSound, realPath, STORE_FILE } from './sqlite-store.js';

/** What `restoreStore` did. */
export interface RestoreReport {
  /** The store's folder, now holding the backup as its `store.sqlite`. */
  dir: string;
  /** The backup it was restored from. */
  backup: string;
  /** Where the folder it replaced was moved, whole (null when there was none). */
  replaced: string | null;
}

/** `2030-01-31T23:59:59.000Z` -> `20300131T235959Z`: a folder name that sorts as time does. */
const stamp = (now: Date) => now.toISOString().replace(/[-:]/g, '').replace(/\.\d+/, '');

/**
 * Put a backup (`checkout-kit store backup`) in place as the embedded store in `dir`: the backup
 * must pass SQLite's integrity check and be a store of this version or older; the folder's
 * current store, if any, must be open in no other process (serve, cron, the console); it is then
 * moved aside whole, to `<dir>.replaced-<time>`, and the backup copied into a new folder. So the
 * restored file never meets the old store's `-wal` and `-shm`, which SQLite would replay onto it.
 */
export function restoreStore(dir: string, backup: string, { now = new Date(), driver }: { now?: Date; driver?: SqliteDriverName } = {}): RestoreReport {
  const folder = resolve(dir);
  const source = resolve(backup);
  if (realPath(source).startsWith(`${realPath(folder)}${sep}`))
    throw new InvalidRequestError(
      `The backup ${source} is inside the store's folder ${folder}, which the restore moves aside: move the backup elsewhere first.`,
    );
  if (!holdsStore(source)) throw new InvalidRequestError(`${source} is not a backup: name a file \`checkout-kit store backup\` wrote.`);
  const sqlite = loadDriver(driver);
  checkBackup(sqlite.open(source, { readonly: true }), source);

  const file = join(folder, STORE_FILE);
  let replaced: string | null = null;
  if (existsSync(folder) && !statSync(folder).isDirectory())
    throw new InvalidRequestError(`The store's folder ${folder} is a file: point the store at a folder (CHECKOUT_STORE=file:<dir>, or --dir).`);
  // An empty folder is used as it is.
  if (existsSync(folder) && readdirSync(folder).length > 0) {
    if (holdsStore(file) && openElsewhere(file, sqlite.name)) throw new StoreError(`${openElsewhereMessage(folder, 'restore')}. Nothing was changed.`);
    replaced = `${folder}.replaced-${stamp(now)}`;
    for (let n = 2; existsSync(replaced); n++) replaced = `${folder}.replaced-${stamp(now)}-${n}`;
    renameSync(folder, replaced);
  }
  mkdirSync(folder, { recursive: true });
  // Copied beside its place and synced, then renamed: a restore cut short leaves no half store.
  const partial = `${file}.partial-${process.pid}`;
  try {
    copyFileSync(source, partial);
    syncPath(partial);
    renameSync(partial, file);
    syncPath(folder);
    syncPath(dirname(folder));
  } finally {
    rmSync(partial, { force: true });
  }
  return { dir: folder, backup: source, replaced };
}

/** Refuse a file that is damaged, not a store, or a store of a newer checkout-kit (which this one could not read). */
function checkBackup(connection: SqliteConnection, source: string): void {
  try {
    const findings = integrityFindings(connection);
    if (!isSound(findings)) throw new InvalidRequestError(`The backup ${source} is damaged (${findings[0]}): restore an older one.`);
    const version = latestApplied(connection, source);
    if (version > LATEST_VERSION) {
      throw new InvalidRequestError(
        `The backup ${source} is a store of a newer checkout-kit (schema ${version}; this one knows up to ${LATEST_VERSION}): upgrade checkout-kit, then restore.`,
      );
    }
  } catch (error) {
    const code = sqliteErrorCode(error);
    if (code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT')
      throw new InvalidRequestError(`The backup ${source} is damaged or not a database (${(error as Error).message}): restore another.`, { cause: error });
    throw error;
  } finally {
    connection.close();
  }
}

function latestApplied(connection: SqliteConnection, source: string): number {
  try {
    return Number(connection.prepare('SELECT max(version) AS version FROM schema_migrations').all()[0]?.version ?? 0);
  } catch (error) {
    throw new InvalidRequestError(
      `${source} is a SQLite file but not a checkout-kit store (it has no schema_migrations): name a file \`checkout-kit store backup\` wrote.`,
      { cause: error },
    );
  }
}

/** fsync a file or folder, so a rename into place outlives a power cut. */
function syncPath(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

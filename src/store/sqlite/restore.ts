import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readdirSync, renameSync, rmdirSync, rmSync, statSync } from 'node:fs';
import { join, resolve, sep } from 'node:path';
import { InvalidRequestError, StoreError } from '../../errors/index.js';
import { LATEST_VERSION } from '../sql/migrations.js';
import { isDamage, loadDriver, sqliteErrorCode, withJournals, type SqliteConnection, type SqliteDriver, type SqliteDriverName } from './driver.js';
import { openElsewhere, openElsewhereMessage } from './open-elsewhere.js';
import { fileIntegrity, holdsStore, integrityFindings, isSound, realPath, STORE_FILE } from './sqlite-store.js';

/** What `restoreStore` did. */
export interface RestoreReport {
  /** The store's folder, now holding the backup as its `store.sqlite`. */
  dir: string;
  /** The backup it was restored from. */
  backup: string;
  /** The folder inside `dir` that the store it replaced was moved to, its files whole (null when there was none). */
  replaced: string | null;
}

/** The file a restore holds for its whole run (see `lockFolder`). */
const RESTORE_LOCK = `${STORE_FILE}.restore-lock`;
/** What a store's folder may hold: the store, what a backup, restore or earlier restore leaves, the restores' lock file. */
const BELONGS =
  /^(store\.sqlite(-wal|-shm|-journal)?|store\.sqlite\.(partial|restoring)-.*|store\.sqlite\.restore-lock(-journal)?|replaced-\d{8}T\d{6}Z(-\d+)?)$/;

/** `2030-01-31T23:59:59.000Z` -> `20300131T235959Z`: a folder name that sorts as time does. */
const stamp = (now: Date) => now.toISOString().replace(/[-:]/g, '').replace(/\.\d+/, '');

/**
 * Put a backup (`checkout-kit store backup`) in place as the embedded store in `dir`. The backup
 * must pass SQLite's integrity check and be a store of this version or older; it is copied
 * through SQLite (a live file's WAL included) into the folder and checked again before anything
 * is moved, so a copy cut short (a full disk) leaves the store as it was. The store it replaces
 * must be open in no other process (serve, cron, the console); its files are then moved, whole,
 * into `<dir>/replaced-<time>` (inside the folder: a folder that is a link or a mount point stays
 * one), so the restored file never meets the old one's `-wal` and `-shm`, which SQLite would
 * replay onto it. A folder that holds anything else than a store is refused: it is not one.
 */
export async function restoreStore(
  dir: string,
  backup: string,
  { now = new Date(), driver }: { now?: Date; driver?: SqliteDriverName } = {},
): Promise<RestoreReport> {
  const folder = resolve(dir);
  const source = resolve(backup);
  if (realPath(source).startsWith(`${realPath(folder)}${sep}`))
    throw new InvalidRequestError(`The backup ${source} is inside the store's folder ${folder}: move it elsewhere first.`);
  if (!existsSync(source)) throw new InvalidRequestError(`There is no file ${source}: name a file \`checkout-kit store backup\` wrote.`);
  if (!holdsStore(source)) throw new InvalidRequestError(`${source} is not a backup: name a file \`checkout-kit store backup\` wrote.`);
  const sqlite = loadDriver(driver);
  const file = join(folder, STORE_FILE);
  const refuseIfOpen = () => {
    if (openElsewhere(file, sqlite.name)) throw new StoreError(`${openElsewhereMessage(folder, 'restore')}. Nothing was changed.`);
  };
  const from = openBackup(sqlite, source);
  // Its own name, not only the pid's: two containers' restores of one volume may both be pid 1.
  const partial = join(folder, `${STORE_FILE}.restoring-${process.pid}-${crypto.randomUUID().slice(0, 8)}`);
  let unlock: (() => void) | undefined;
  try {
    checkBackup(from, source);
    prepareFolder(folder);
    unlock = lockFolder(sqlite, folder);
    removeLeftovers(folder);
    refuseIfOpen();
    await copyBackup(sqlite, from, source, partial);
    // The copy may have taken a while: whoever opened the store meanwhile keeps it.
    refuseIfOpen();
    const replaced = moveAside(folder, now);
    try {
      renameSync(partial, file);
    } catch (error) {
      if (replaced) for (const name of readdirSync(replaced)) renameSync(join(replaced, name), join(folder, name));
      throw error;
    }
    syncPath(folder);
    return { dir: folder, backup: source, replaced };
  } catch (error) {
    if (error instanceof StoreError || error instanceof InvalidRequestError) throw error;
    throw new StoreError(`Cannot restore into ${folder}: ${(error as Error).message}. The store there was left as it was.`, { cause: error });
  } finally {
    from.close();
    if (unlock) {
      for (const leftover of withJournals(partial)) rmSync(leftover, { force: true });
      unlock();
    }
  }
}

/**
 * Take the folder for one restore, until the returned function lets go: SQLite's exclusive lock on
 * `<dir>/store.sqlite.restore-lock`, so of two restores at once one alone goes on. A lock of its own
 * rather than the store's: a restore moves the store's file away (a lock on it would move with it),
 * and a folder with no store yet has no file to lock. The kernel drops it when its process ends,
 * however it ends: a restore killed midway never blocks the next one. The file stays: removed, a
 * restore that had just opened it would lock a file that no later restore sees.
 */
function lockFolder(sqlite: SqliteDriver, folder: string): () => void {
  const path = join(folder, RESTORE_LOCK);
  const lock = sqlite.open(path);
  try {
    // At once: a restore that is running holds it for as long as it runs. No journal file beside it.
    lock.pragma('busy_timeout = 0');
    lock.pragma('journal_mode = MEMORY');
    lock.exec('BEGIN EXCLUSIVE');
    // A write: SQLite opens a file this user cannot write read-only, where BEGIN EXCLUSIVE takes a
    // lock others share; a write is refused there instead.
    lock.exec('PRAGMA user_version = 1');
  } catch (error) {
    lock.close();
    const code = sqliteErrorCode(error);
    if (code === 'SQLITE_BUSY')
      throw new StoreError(`Another restore of the store ${folder} is running: let it finish, and check what it restored. Nothing was changed.`, {
        cause: error,
      });
    throw new StoreError(
      `Cannot take the restore's lock ${path} (${(error as Error).message}): ${code === 'SQLITE_READONLY' ? 'it is not writable by this user (a restore run as another user made it?): fix its owner, or remove it' : 'it is not a lock file of checkout-kit: remove it'}, then restore again. Nothing was changed.`,
      { cause: error },
    );
  }
  return () => lock.close();
}

/**
 * What a restore killed midway left: its copy of the backup, and a `replaced-<time>` folder it made
 * but moved nothing into (one that holds anything stays). No other restore runs while the lock is held.
 */
function removeLeftovers(folder: string): void {
  for (const name of readdirSync(folder)) {
    if (name.startsWith(`${STORE_FILE}.restoring-`)) rmSync(join(folder, name), { force: true });
    else if (name.startsWith('replaced-') && isEmptyFolder(join(folder, name))) rmdirSync(join(folder, name));
  }
}

const isEmptyFolder = (path: string) => statSync(path).isDirectory() && readdirSync(path).length === 0;

/** Make sure `folder` is one a store lives in (made when missing), so that nothing else in it is ever moved. */
function prepareFolder(folder: string): void {
  if (!existsSync(folder)) {
    try {
      mkdirSync(folder, { recursive: true });
      return;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOTDIR' || code === 'EEXIST') throw new InvalidRequestError(`Cannot make the store's folder ${folder}: a part of its path is a file.`);
      throw new StoreError(`Cannot make the store's folder ${folder}: ${(error as Error).message}.`, { cause: error });
    }
  }
  if (!statSync(folder).isDirectory())
    throw new InvalidRequestError(`The store's folder ${folder} is a file: point the store at a folder (CHECKOUT_STORE=file:<dir>, or --dir).`);
  const others = readdirSync(folder).filter((name) => !BELONGS.test(name));
  if (others.length > 0) {
    throw new InvalidRequestError(
      `${folder} holds more than a store (${others.slice(0, 3).join(', ')}${others.length > 3 ? ', …' : ''}): name the store's own folder (CHECKOUT_STORE=file:<dir>, or --dir). Nothing was changed.`,
    );
  }
}

/** The backup, through SQLite (what its WAL holds too), into `partial`, checked as a backup is. */
async function copyBackup(sqlite: SqliteDriver, from: SqliteConnection, source: string, partial: string): Promise<void> {
  await from.backup(partial);
  const findings = fileIntegrity(partial, sqlite.name);
  if (!isSound(findings))
    throw new StoreError(`The copy of the backup ${source} came out damaged (${findings[0]}): nothing was changed. Check the disk, then restore again.`);
  syncPath(partial);
}

const damagedBackup = (source: string, error: unknown) =>
  new InvalidRequestError(`The backup ${source} is damaged or not a database (${(error as Error).message}): restore another.`, { cause: error });

function openBackup(sqlite: SqliteDriver, source: string): SqliteConnection {
  try {
    const connection = sqlite.open(source, { readonly: true });
    connection.pragma('schema_version');
    return connection;
  } catch (error) {
    if (isDamage(error)) throw damagedBackup(source, error);
    throw new StoreError(
      `Cannot read the backup ${source} (${(error as Error).message}): SQLite writes beside a file to read it (its -shm); copy the backup into a folder you can write to, and restore the copy.`,
      { cause: error },
    );
  }
}

/** Refuse a file that is damaged, not a store, or a store of a newer checkout-kit (which this one could not read). */
function checkBackup(connection: SqliteConnection, source: string): void {
  try {
    const findings = integrityFindings(connection);
    if (!isSound(findings)) throw new InvalidRequestError(`The backup ${source} is damaged (${findings[0]}): restore an older one.`);
    let version: number;
    try {
      version = Number(connection.prepare('SELECT max(version) AS version FROM schema_migrations').all()[0]?.version ?? 0);
    } catch (error) {
      throw new InvalidRequestError(
        `${source} is a SQLite file but not a checkout-kit store (it has no schema_migrations): name a file \`checkout-kit store backup\` wrote.`,
        { cause: error },
      );
    }
    if (version > LATEST_VERSION) {
      throw new InvalidRequestError(
        `The backup ${source} is a store of a newer checkout-kit (schema ${version}; this one knows up to ${LATEST_VERSION}): upgrade checkout-kit, then restore.`,
      );
    }
  } catch (error) {
    if (isDamage(error)) throw damagedBackup(source, error);
    throw error;
  }
}

/** Move the store's files into a new `replaced-<time>` folder inside `folder`; null when there are none. */
function moveAside(folder: string, now: Date): string | null {
  const present = withJournals(STORE_FILE).filter((name) => existsSync(join(folder, name)));
  if (present.length === 0) return null;
  let replaced = join(folder, `replaced-${stamp(now)}`);
  for (let n = 2; existsSync(replaced); n++) replaced = join(folder, `replaced-${stamp(now)}-${n}`);
  mkdirSync(replaced);
  const moved: string[] = [];
  try {
    for (const name of present) {
      renameSync(join(folder, name), join(replaced, name));
      moved.push(name);
    }
  } catch (error) {
    for (const name of moved) renameSync(join(replaced, name), join(folder, name));
    throw error;
  }
  return replaced;
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

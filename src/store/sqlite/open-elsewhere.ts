import { isDamage, loadDriver, sqliteErrorCode, type SqliteDriverName } from './driver.js';
import { storeError } from './sqlite-database.js';
import { holdsStore } from './sqlite-store.js';

/**
 * Whether another connection has the store `file` open, idle ones too (what an offline operation
 * such as a restore or a move must not run beside): an exclusive lock, asked for once without
 * waiting, is refused while any has, since every WAL connection holds a shared lock. Closing this
 * connection then folds the WAL into the file. Damage is met only once the lock is held, so a
 * damaged file is open nowhere else. No store at `file` is open nowhere (and is not created).
 */
export function openElsewhere(file: string, driver?: SqliteDriverName): boolean {
  if (!holdsStore(file)) return false;
  const connection = loadDriver(driver).open(file);
  try {
    connection.pragma('busy_timeout = 0');
    connection.pragma('locking_mode = EXCLUSIVE');
    connection.exec('BEGIN EXCLUSIVE; COMMIT');
    return false;
  } catch (error) {
    if (isDamage(error)) return false;
    const code = sqliteErrorCode(error);
    if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') return true;
    throw storeError(file, error);
  } finally {
    connection.close();
  }
}

/** What an offline operation's refusal says: who may hold the store, and what to do. */
export const openElsewhereMessage = (folder: string, then: string) =>
  `The store ${folder} is open in another process (serve, a cron reconcile, the console…): stop them, then ${then}`;

import { existsSync, lstatSync, mkdirSync, readdirSync, realpathSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve, sep } from 'node:path';
import { ConfigError, InvalidRequestError, NoStoreError, StoreError } from '../../errors/index.js';
import { sqliteDialect } from '../sql/dialect.js';
import { migrationsTable, recordMigration } from '../sql/migrate.js';
import { MIGRATIONS } from '../sql/migrations.js';
import { SqlStore } from '../sql/sql-store.js';
import { isDamage, loadDriver, withJournals, type SqliteConnection, type SqliteDriverName } from './driver.js';
import { sqliteDatabase, type SqliteDatabase, type SqliteDatabaseOptions } from './sqlite-database.js';

/** The file inside an embedded store's folder. */
export const STORE_FILE = 'store.sqlite';

/** Where the store is, and how its database is opened. */
export interface SqliteStoreOptions extends Omit<SqliteDatabaseOptions, 'path'> {
  /** The store's folder (created on open unless `readonly`), holding `store.sqlite`; omit for a store in memory. */
  dir?: string | undefined;
  /** What the store's URL was given as, named in messages that say what to check (e.g. `--to` for `store copy`'s target). @default 'CHECKOUT_STORE' (`CHECKOUT_STORE, or store's --dir` for a missing read-only store) */
  setting?: string | undefined;
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
    // The driver first: a command that cannot open the store for want of SQLite leaves no folder behind.
    loadDriver(options.driver);
    if (options.dir !== undefined) prepareFolder(options.dir, file, Boolean(options.readonly), options.setting);
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
   * writes. Resolves once the copy is complete. A file already at `destination` is replaced only
   * with `replace`; a destination inside the store's own folder, or that is not a file, never is
   * (an `InvalidRequestError`). What backups to the same destination by processes no longer
   * running left beside it is removed first (see `removeDeadPartials`).
   */
  async backup(destination: string, { replace = false }: { replace?: boolean } = {}): Promise<BackupReport> {
    if (this.file === ':memory:') throw new InvalidRequestError('A store in memory has no file to back up.');
    checkBackupTarget(this.file, destination, replace);
    const cannotWrite = (error: unknown) =>
      new StoreError(`Cannot write the backup ${destination}: ${(error as Error).message}. Name a file in a folder you can write to.`, { cause: error });
    try {
      mkdirSync(dirname(destination), { recursive: true });
    } catch (error) {
      throw cannotWrite(error);
    }
    const leftoversRemoved = removeDeadPartials(destination);
    // Written beside it, then renamed into place: a backup cut short never damages the last good one.
    const leftovers = partialBackupFiles(destination);
    const partial = leftovers[0];
    const damaged = (finding: string, cause?: unknown) =>
      new StoreError(
        `The store ${this.file} is damaged (${finding.split('\n')[0]}): no backup was written, and no file at ${destination} was replaced. Keep your last good backup; see \`checkout-kit store check\`.`,
        { cause },
      );
    try {
      await this.sqlite.connection.backup(partial);
      // A copy of damaged pages is a damaged backup: checked as `store check` checks, before it can replace a good one.
      const findings = fileIntegrity(partial, this.driver);
      if (!isSound(findings)) throw damaged(findings[0]!);
      renameSync(partial, destination);
      return { leftoversRemoved };
    } catch (error) {
      if (isDamage(error)) throw damaged((error as Error).message, error);
      throw error instanceof StoreError ? error : cannotWrite(error);
    } finally {
      for (const leftover of leftovers) rmSync(leftover, { force: true });
    }
  }

  /** SQLite's `data_version`: it changes whenever another connection commits to the file, so two equal marks mean nothing was written elsewhere between. */
  writeMark(): number {
    return Number(this.sqlite.connection.pragma('data_version')[0]?.data_version);
  }

  /** SQLite's own check of the file: `['ok']` when it is sound, else what is damaged (`quick`: see `integrityFindings`). */
  integrityCheck({ quick = false }: { quick?: boolean } = {}): string[] {
    try {
      return integrityFindings(this.sqlite.connection, quick ? 'quick_check' : 'integrity_check');
    } catch (error) {
      // Damage bad enough that the check itself cannot read the file.
      return [(error as Error).message];
    }
  }
}

/** What `SqliteStore.backup` did besides the backup. */
export interface BackupReport {
  /** Files that backups to the same destination by processes no longer running had left beside it, removed before it began. */
  leftoversRemoved: string[];
}

/**
 * Remove what backups to `destination` by processes no longer running left beside it: one killed
 * (SIGKILL, a power cut) cannot remove its partial copy, as large as the store, and nothing else
 * would. Those of running processes (another user's too) are left alone. Returns the files removed.
 */
function removeDeadPartials(destination: string): string[] {
  const folder = dirname(destination);
  const prefix = `${basename(destination)}.partial-`;
  let names: string[];
  try {
    names = readdirSync(folder);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    const digits = name.startsWith(prefix) ? /^\d+/.exec(name.slice(prefix.length))?.[0] : undefined;
    const pid = digits && withJournals(`${prefix}${digits}`).includes(name) ? Number(digits) : NaN;
    if (!(pid > 0) || pid === process.pid || isRunning(pid)) continue;
    const leftover = join(folder, name);
    try {
      if (!lstatSync(leftover).isFile()) continue;
      rmSync(leftover);
      removed.push(leftover);
    } catch {
      // Not this user's to remove (or gone meanwhile): it stays.
    }
  }
  return removed;
}

/** Whether process `pid` is running: signal 0 only asks. A process of another user's is (EPERM); ESRCH says none is. */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/** What this process's backup to `destination` writes beside it before it is put in place: the copy first, then its journals. */
export const partialBackupFiles = (destination: string) => withJournals(`${destination}.partial-${process.pid}`);

/**
 * SQLite's integrity check of `connection`'s file, a finding a line: `['ok']` when sound.
 * `quick_check` skips matching indexes to their tables: a fraction of the time on a large store.
 */
export function integrityFindings(connection: SqliteConnection, check: 'integrity_check' | 'quick_check' = 'integrity_check'): string[] {
  return connection.pragma(check).flatMap((row) => String(row[check]).split('\n'));
}

/** SQLite's integrity check of the database file `path`, opened read-only for it: `['ok']` when sound. */
export function fileIntegrity(path: string, driver: SqliteDriverName): string[] {
  const connection = loadDriver(driver).open(path, { readonly: true });
  try {
    return integrityFindings(connection);
  } finally {
    connection.close();
  }
}

/** Whether integrity findings say the file is sound (SQLite answers a single `ok`). */
export const isSound = (findings: readonly string[]) => findings.length === 1 && findings[0] === 'ok';

/** Whether `file` holds a store: a file with something in it (SQLite would take an empty one for a new store). */
export function holdsStore(file: string): boolean {
  try {
    const stats = statSync(file);
    return stats.isFile() && stats.size > 0;
  } catch {
    return false;
  }
}

/** `path` with links resolved as far as it exists (what it will be once created). */
export function realPath(path: string): string {
  const absolute = resolve(path);
  if (existsSync(absolute)) return realpathSync(absolute);
  const parent = dirname(absolute);
  return parent === absolute ? absolute : join(realPath(parent), basename(absolute));
}

/**
 * Refuse a backup that would replace the store's own files (renamed over the live database, it
 * leaves `serve` writing to an unlinked file: the store on disk is then damaged), or anything that
 * is not a file, or (without `replace`) a file already there: another shop's store, say.
 */
function checkBackupTarget(storeFile: string, destination: string, replace: boolean): void {
  const storeDir = realPath(dirname(storeFile));
  const target = realPath(destination);
  if (target === storeDir || target.startsWith(`${storeDir}${sep}`)) {
    throw new InvalidRequestError(
      `The backup ${destination} would be in the store's own folder ${storeDir}: write it elsewhere, e.g. backups/store-2030-01-01.sqlite.`,
    );
  }
  if (!existsSync(target)) return;
  if (!statSync(target).isFile()) throw new InvalidRequestError(`The backup ${destination} is not a file: name a file, e.g. backups/store-2030-01-01.sqlite.`);
  if (!replace) throw new InvalidRequestError(`The backup ${destination} already exists: name a new file, or pass --force to replace it.`);
}

/** Apply every migration to a new database in memory, at once (no transaction: nothing else can see it). */
function migrateNow(connection: SqliteConnection): void {
  connection.exec([migrationsTable(sqliteDialect), ...MIGRATIONS.flatMap((migration) => migration.statements(sqliteDialect))].join(';\n'));
  for (const migration of MIGRATIONS) {
    const { text, values } = recordMigration(sqliteDialect, migration);
    connection.prepare(text).run(values);
  }
}

/** What an earlier checkout-kit's embedded store left in its folder: a snapshot and its journal segments. */
const EARLIER_FORMAT = /^(snapshot\.json|journal-\d+\.jsonl)$/;

/**
 * Refuse a folder that holds a store in the format an earlier checkout-kit wrote (and no SQLite
 * store): opened as an empty store, every event and fulfilled order in it would be new again.
 */
export function refuseEarlierFormat(dir: string): void {
  // A store already there (nearly every open) is the one to open: no need to list the folder.
  if (holdsStore(join(dir, STORE_FILE))) return;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  const earlier = names.filter((name) => EARLIER_FORMAT.test(name)).sort();
  if (earlier.length === 0) return;
  throw new ConfigError(
    `${dir} holds a store written by an earlier checkout-kit (${earlier.slice(0, 2).join(', ')}${earlier.length > 2 ? ', …' : ''}), which this version does not read; nothing was changed. To keep its history, stay on that version until its payments have settled. To start afresh, move the folder aside: nothing of it is carried over (\`checkout-kit reconcile\` finds invoices again, not payments), and events and orders it knew come again as new, so handlers must be idempotent by ctx.key.`,
  );
}

/** Make the store's folder (or, read-only, make sure the store is there), with a clear error when that cannot be. */
function prepareFolder(dir: string, file: string, readonly: boolean, setting: string | undefined): void {
  refuseEarlierFormat(dir);
  // The wrong place given, as a folder with no store is (exit 2 in the CLI), not a failing store.
  const isAFile = (cause?: unknown) =>
    new ConfigError(
      `Cannot open the store ${dir}: it (or a folder above it) is a file, not a folder. Point the store at a folder (${setting ?? 'CHECKOUT_STORE'}=file:<dir>).`,
      { cause },
    );
  if (readonly) {
    if (holdsStore(file)) return;
    if (existsSync(file) && statSync(file).isFile()) {
      throw new ConfigError(`${file} is an empty file, not a store (a restore cut short?): put the backup in place again, or move the file aside.`);
    }
    if (existsSync(dir) && !statSync(dir).isDirectory()) throw isAFile();
    // The caller named the wrong place (a configuration error, exit 2 in the CLI), not a failing store.
    throw new NoStoreError(`No store at ${dir}: nothing has been stored there yet. Check the folder given (${setting ?? "CHECKOUT_STORE, or store's --dir"}).`);
  }
  try {
    mkdirSync(dir, { recursive: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw code === 'EEXIST' || code === 'ENOTDIR' ? isAFile(error) : error;
  }
}

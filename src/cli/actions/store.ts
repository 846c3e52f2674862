import { rmSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { DEFAULT_STORE, loadConfig } from '../../config/index.js';
import { refuseTildeStore } from '../../config/environment.js';
import { StoreError } from '../../errors/index.js';
import { copyStore } from '../../store/sql/copy.js';
import { DEFAULT_POSTGRES_SCHEMA } from '../../store/sql/dialect.js';
import { SqlStore } from '../../store/sql/sql-store.js';
import { fileStoreDir, openStore } from '../../store/open.js';
import { isDamage } from '../../store/sqlite/driver.js';
import { restoreStore } from '../../store/sqlite/restore.js';
import { openElsewhere, openElsewhereMessage } from '../../store/sqlite/open-elsewhere.js';
import { isSound, partialBackupFiles, realPath, SqliteStore, STORE_FILE } from '../../store/sqlite/sqlite-store.js';
import { EXIT, UsageError } from '../exit.js';
import { output, writeLine, type CliIO } from '../io.js';

/** PostgreSQL's own tool for each of these commands; each takes the schema the tables are in. */
const POSTGRES_TOOLS: Record<'check' | 'backup' | 'restore', string> = { check: 'pg_amcheck', backup: 'pg_dump', restore: 'pg_restore' };

/** The schema a PostgreSQL store URL keeps its tables in. */
function postgresSchema(url: string): string {
  try {
    return new URL(url).searchParams.get('schema') ?? DEFAULT_POSTGRES_SCHEMA;
  } catch {
    return DEFAULT_POSTGRES_SCHEMA;
  }
}

/**
 * The embedded store's folder: `--dir`, else CHECKOUT_STORE's `file:` folder. Other stores are a
 * usage error: PostgreSQL has its own tools (pg_amcheck, pg_dump, pg_restore).
 */
function storeDir(io: CliIO, dir: string | undefined, command: keyof typeof POSTGRES_TOOLS): string {
  if (dir !== undefined) {
    // An empty --dir (an unset variable) would be the current folder.
    if (dir.trim() === '') throw new UsageError(`store ${command}: --dir is empty: give the store's folder, e.g. --dir .checkout-kit.`);
    return resolve(io.cwd, dir);
  }
  const url = loadConfig({ env: io.env, cwd: io.cwd }).store;
  if (url.startsWith('file:')) return fileStoreDir(url, io.cwd);
  // Only the scheme: a store URL may carry credentials.
  const scheme = /^[a-z][a-z0-9+.-]*:/i.exec(url)?.[0] ?? 'that';
  const why = /^postgres(ql)?:$/.test(scheme)
    ? `use PostgreSQL's own tools on the store's schema (${POSTGRES_TOOLS[command]} --schema=${postgresSchema(url)} …)`
    : 'it keeps nothing on disk';
  throw new UsageError(`store ${command} is for the embedded store (CHECKOUT_STORE=file:<dir>), not a ${scheme} store: ${why}.`);
}

/** Open the embedded store in `dir` for reading only, run `work`, close it. */
async function withReadonlyStore<T>(dir: string, work: (store: SqliteStore) => Promise<T> | T): Promise<T> {
  const store = new SqliteStore({ dir, readonly: true });
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

/** A store URL for messages: only its scheme and place, never credentials (a password may hold `@`, or be a parameter). */
const shown = (url: string) => url.replace(/\/\/[^/?#]*@/, '//').replace(/([?&]password=)[^&#]*/gi, '$1…');

/** What names one store however it is spelled: an embedded store's folder with links resolved, else the URL. */
function sameStore(a: string, b: string, cwd: string): boolean {
  const place = (url: string) => (url.startsWith('file:') ? realPath(fileStoreDir(url, cwd)) : url);
  return place(a) === place(b);
}

/** `checkout-kit store check`: SQLite's integrity check; exit 1 when damaged. */
export async function checkStore(options: { dir?: string; json?: boolean }, io: CliIO, setExit: (code: number) => void): Promise<void> {
  const dir = storeDir(io, options.dir, 'check');
  // Damage that keeps the file from opening at all is a finding of the check, not its failure.
  const problems = await withReadonlyStore(dir, (opened) => opened.integrityCheck()).catch((error: unknown) => {
    const cause = (error as Error).cause;
    if (isDamage(cause)) return [(cause as Error).message];
    throw error;
  });
  const healthy = isSound(problems);
  const report = { dir, status: healthy ? 'healthy' : 'damaged', problems: healthy ? [] : problems };
  output(io, options.json ?? false, report, () =>
    healthy
      ? `store ${dir}: healthy`
      : [
          `store ${dir}: DAMAGED`,
          ...problems.slice(0, 20).map((line) => `  ${line}`),
          ...(problems.length > 20 ? [`  …and ${problems.length - 20} more (--json lists them all)`] : []),
          'Restore the latest backup (`checkout-kit store restore <file>`), then run `checkout-kit reconcile` to catch up.',
        ].join('\n'),
  );
  if (!healthy) setExit(EXIT.failures);
}

/**
 * Run `work`; a SIGINT or SIGTERM meanwhile (Ctrl-C, a supervisor stopping the job) is said in one
 * line, `stopped(signal)` (which first undoes what must not stay), and ends the process by that
 * signal, as a shell or supervisor expects of a command it stopped. The signal alone would end it
 * without a word on what it leaves behind.
 */
async function sayingIfStopped<T>(io: CliIO, stopped: (signal: NodeJS.Signals) => string, work: () => Promise<T>): Promise<T> {
  const stop = (signal: NodeJS.Signals) => {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    writeLine(io.stderr, `checkout-kit: ${stopped(signal)}`);
    process.kill(process.pid, signal);
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  try {
    return await work();
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
}

/** `checkout-kit store backup <file>`: an online copy of the embedded store. */
export async function backupStore(file: string, options: { dir?: string; force?: boolean; json?: boolean }, io: CliIO): Promise<void> {
  const dir = storeDir(io, options.dir, 'backup');
  if (file.trim() === '') throw new UsageError('store backup takes the file to write, e.g. backups/store-2030-01-01.sqlite.');
  const destination = resolve(io.cwd, file);
  // Stopped midway, it removes the partial copy it wrote beside the destination: as large as the store, nothing else would.
  const stopped = (signal: NodeJS.Signals) => {
    for (const leftover of partialBackupFiles(destination)) rmSync(leftover, { force: true });
    return `store backup stopped (${signal}): no backup was written to ${destination}, and nothing there was replaced.`;
  };
  const { leftoversRemoved } = await withReadonlyStore(dir, (opened) =>
    sayingIfStopped(io, stopped, () => opened.backup(destination, { replace: options.force ?? false })),
  );
  output(io, options.json ?? false, { dir, backup: destination, leftoversRemoved }, () =>
    [
      `store ${dir}: backed up to ${destination}`,
      ...(leftoversRemoved.length > 0
        ? [`  removed what a backup killed midway had left beside it: ${leftoversRemoved.map((file) => basename(file)).join(', ')}`]
        : []),
    ].join('\n'),
  );
}

/** `checkout-kit store restore <file>`: a backup in place as the embedded store, the store it replaces moved aside. */
export async function restoreStoreFrom(file: string, options: { dir?: string; json?: boolean }, io: CliIO): Promise<void> {
  const dir = storeDir(io, options.dir, 'restore');
  if (file.trim() === '') throw new UsageError('store restore takes the backup to put in place, e.g. backups/store-2030-01-01.sqlite.');
  const report = await restoreStore(dir, resolve(io.cwd, file));
  output(io, options.json ?? false, report, () =>
    [
      `store ${report.dir}: restored from ${report.backup}`,
      ...(report.replaced ? [`  the store it replaced is in ${report.replaced}`] : []),
      'Start serve, then run `checkout-kit reconcile --older-than 1m`: it catches up on what the service knows since the backup.',
    ].join('\n'),
  );
}

/** `checkout-kit store copy --to <url>`: every row of one SQL store into another; exit 1 when not every row made it. */
export async function copyStoreTo(options: { to: string; from?: string; json?: boolean }, io: CliIO, setExit: (code: number) => void): Promise<void> {
  const from = options.from ?? loadConfig({ env: io.env, cwd: io.cwd }).store;
  if (sameStore(from, options.to, io.cwd)) {
    // After the move, CHECKOUT_STORE names the new store: copying the embedded one again needs its name.
    const again =
      options.from === undefined && !from.startsWith('file:')
        ? ` (CHECKOUT_STORE, the source when --from is not given); to copy the embedded store again, name it: --from ${DEFAULT_STORE}`
        : '';
    throw new UsageError(`store copy: --to names the source store itself${again}. Give another store.`);
  }
  if (options.to.startsWith('memory:')) throw new UsageError('store copy: a memory: store keeps nothing: copy --to file:<dir> or postgres://….');
  // Said before the source is checked: a mistyped --to is not found only after serve was stopped for the copy.
  if (options.from !== undefined) refuseTildeStore(options.from, '--from');
  refuseTildeStore(options.to, '--to');
  if (!options.to.startsWith('file:') && !/^postgres(ql)?:\/\//.test(options.to)) {
    const scheme = /^[a-z][a-z0-9+.-]*:/i.exec(options.to)?.[0];
    throw new UsageError(
      scheme === undefined
        ? `store copy: --to "${options.to}" is a bare path: write file:${options.to} for an embedded store in that folder, or give postgres://….`
        : `store copy: --to "${scheme}…" is none of file:<dir> or postgres://….`,
    );
  }
  // Rows written meanwhile would come out as changed, after a whole copy: refuse before it starts.
  const sourceFile = from.startsWith('file:') ? join(fileStoreDir(from, io.cwd), STORE_FILE) : undefined;
  if (sourceFile !== undefined && openElsewhere(sourceFile)) throw new StoreError(`${openElsewhereMessage(dirname(sourceFile), 'copy')}. Nothing was copied.`);
  // Each page is written on its own and a row already there is skipped: what a stopped copy wrote stays, and is not written twice.
  const stopped = (signal: NodeJS.Signals) =>
    `store copy stopped (${signal}): the rows it copied so far stay in the target ${shown(options.to)}; run the copy again to complete it: it copies only what is missing.`;
  const { copied, writtenDuringCopy } = await sayingIfStopped(io, stopped, async () => {
    // Messages name where each URL came from: a mistyped --to is not fixed in CHECKOUT_STORE.
    const source = await openStore(from, { cwd: io.cwd, readonly: true, setting: options.from === undefined ? 'CHECKOUT_STORE' : '--from' });
    try {
      const target = await openStore(options.to, { cwd: io.cwd, setting: '--to' });
      try {
        if (!(source instanceof SqlStore) || !(target instanceof SqlStore)) throw new UsageError('store copy works between SQL stores (file:, postgres://).');
        // The check above is made once, at the start: a process that opened the source since (a cron
        // reconcile, serve started again) may have written rows the copy had passed, or may write them still.
        const mark = source instanceof SqliteStore ? source.writeMark() : undefined;
        const report = await copyStore(source, target);
        return { copied: report, writtenDuringCopy: source instanceof SqliteStore && source.writeMark() !== mark };
      } finally {
        await target.close();
      }
    } finally {
      await source.close();
    }
  });
  // Asked once this copy's own connection is closed: one still open elsewhere may write after the copy.
  const writtenMeanwhile = writtenDuringCopy || (sourceFile !== undefined && openElsewhere(sourceFile));
  const report = writtenMeanwhile ? { ...copied, complete: false, sourceWrittenDuringCopy: true } : copied;
  output(io, options.json ?? false, report, () =>
    [
      `copied ${shown(from)} -> ${shown(options.to)}`,
      ...report.tables.map(
        (row) =>
          `  ${row.table.padEnd(18)} ${String(row.source).padStart(8)} in source, ${String(row.target).padStart(8)} in target, ${row.copied} copied now${row.changed > 0 ? `, ${row.changed} changed in the source since copied` : ''}`,
      ),
      report.complete
        ? 'every row of the source is in the target'
        : writtenMeanwhile
          ? 'NOT surely every row of the source is in the target: another process (serve, a cron reconcile, the console) opened the source during the copy and may have written to it. Stop it, then run the copy again; if that reports rows changed since copied, copy into an empty store.'
          : report.tables.some((row) => row.changed > 0)
            ? 'NOT every row of the source is in the target as the source has it: rows changed in the source after they were copied (serve or cron still ran), and the target keeps them as they were. Stop serve and cron on the source, then copy into an empty store.'
            : 'NOT every row of the source is in the target: run the copy again',
    ].join('\n'),
  );
  if (!report.complete) setExit(EXIT.failures);
}

import { resolve } from 'node:path';
import { loadConfig } from '../../config/index.js';
import { copyStore } from '../../store/sql/copy.js';
import { SqlStore } from '../../store/sql/sql-store.js';
import { fileStoreDir, openStore } from '../../store/open.js';
import { sqliteErrorCode } from '../../store/sqlite/driver.js';
import { SqliteStore } from '../../store/sqlite/sqlite-store.js';
import { EXIT, UsageError } from '../exit.js';
import { output, type CliIO } from '../io.js';
import type { Register } from '../register.js';

/**
 * The embedded store's folder: `--dir`, else CHECKOUT_STORE's `file:` folder. Other stores are a
 * usage error: PostgreSQL has its own tools (pg_amcheck, pg_dump).
 */
function storeDir(io: CliIO, dir: string | undefined, command: string): string {
  if (dir !== undefined) return resolve(io.cwd, dir);
  const url = loadConfig({ env: io.env, cwd: io.cwd }).store;
  if (url.startsWith('file:')) return fileStoreDir(url, io.cwd);
  // Only the scheme: a store URL may carry credentials.
  const scheme = /^[a-z][a-z0-9+.-]*:/i.exec(url)?.[0] ?? 'that';
  const why = /^postgres(ql)?:$/.test(scheme) ? 'use PostgreSQL\'s own tools (pg_amcheck, pg_dump)' : 'it keeps nothing on disk';
  throw new UsageError(`store ${command} is for the embedded store (CHECKOUT_STORE=file:<dir>), not a ${scheme} store: ${why}.`);
}

/** Open the embedded store in `dir` for reading only, run `work`, close it. */
async function withStore<T>(dir: string, work: (store: SqliteStore) => Promise<T> | T): Promise<T> {
  const store = new SqliteStore({ dir, readonly: true });
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

/** A store URL for messages: only its scheme and place, never credentials. */
const shown = (url: string) => url.replace(/\/\/[^@/]*@/, '//');

/** `checkout-kit store check|backup|copy`: the embedded store's soundness, an online copy of it, and moving a shop to another store. */
export const registerStore: Register = (program, io, setExit) => {
  const store = program.command('store').description('check and back up the embedded store, or copy a store to PostgreSQL');
  store
    .command('check')
    .description("SQLite's integrity check of the store file (exit 1 when damaged)")
    .option('--dir <dir>', 'the store folder (default: CHECKOUT_STORE)')
    .option('--json', 'JSON output')
    .action(async (options: { dir?: string; json?: boolean }) => {
      const dir = storeDir(io, options.dir, 'check');
      // Damage that keeps the file from opening at all is a finding of the check, not its failure.
      const problems = await withStore(dir, (opened) => opened.integrityCheck()).catch((error: unknown) => {
        const cause = (error as Error).cause;
        const code = sqliteErrorCode(cause);
        if (code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT') return [(cause as Error).message];
        throw error;
      });
      const healthy = problems.length === 1 && problems[0] === 'ok';
      const report = { dir, status: healthy ? 'healthy' : 'damaged', problems: healthy ? [] : problems };
      output(io, options.json ?? false, report, () =>
        healthy
          ? `store ${dir}: healthy`
          : [`store ${dir}: DAMAGED`, ...problems.slice(0, 20).map((line) => `  ${line}`), 'Restore the latest `checkout-kit store backup`, then run `checkout-kit reconcile` to catch up.'].join('\n'),
      );
      if (!healthy) setExit(EXIT.failures);
    });
  store
    .command('backup')
    .description('write a consistent copy of the store to a file (safe while serve runs)')
    .argument('<file>', 'where the copy goes, e.g. backups/store-2030-01-01.sqlite (its folder is created)')
    .option('--dir <dir>', 'the store folder (default: CHECKOUT_STORE)')
    .option('--json', 'JSON output')
    .action(async (file: string, options: { dir?: string; json?: boolean }) => {
      const dir = storeDir(io, options.dir, 'backup');
      const destination = resolve(io.cwd, file);
      await withStore(dir, (opened) => opened.backup(destination));
      output(io, options.json ?? false, { dir, backup: destination }, () => `store ${dir}: backed up to ${destination}`);
    });
  store
    .command('copy')
    .description('copy every event, run, payment, checkout and timeline into another store, e.g. from the embedded one to PostgreSQL (stop serve first; safe to run again)')
    .requiredOption('--to <url>', 'the target store (postgres://…, file:<dir>)')
    .option('--from <url>', 'the source store (default: CHECKOUT_STORE)')
    .option('--json', 'JSON output')
    .action(async (options: { to: string; from?: string; json?: boolean }) => {
      const from = options.from ?? loadConfig({ env: io.env, cwd: io.cwd }).store;
      if (from === options.to) throw new UsageError('store copy: --to names the source store itself: give another store.');
      const source = await openStore(from, { cwd: io.cwd, readonly: true });
      try {
        const target = await openStore(options.to, { cwd: io.cwd });
        try {
          if (!(source instanceof SqlStore) || !(target instanceof SqlStore)) throw new UsageError('store copy works between SQL stores (file:, postgres://).');
          const report = await copyStore(source, target);
          output(io, options.json ?? false, report, () =>
            [
              `copied ${shown(from)} -> ${shown(options.to)}`,
              ...report.tables.map((row) => `  ${row.table.padEnd(18)} ${String(row.source).padStart(8)} in source, ${String(row.target).padStart(8)} in target, ${row.copied} copied now${row.skipped ? ` (skipped: ${row.skipped})` : ''}`),
              report.complete ? 'every row of the source is in the target' : 'NOT every row of the source is in the target: run the copy again',
            ].join('\n'),
          );
          if (!report.complete) setExit(EXIT.failures);
        } finally {
          await target.close();
        }
      } finally {
        await source.close();
      }
    });
};

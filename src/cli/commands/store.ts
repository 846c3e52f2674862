import { resolve } from 'node:path';
import { loadConfig } from '../../config/index.js';
import { fileStoreDir } from '../../store/open.js';
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

/** `checkout-kit store check|backup`: the embedded store's soundness, and an online copy of it. */
export const registerStore: Register = (program, io, setExit) => {
  const store = program.command('store').description('check the embedded store file, and back it up while serve runs');
  store
    .command('check')
    .description("SQLite's integrity check of the store file (exit 1 when damaged)")
    .option('--dir <dir>', 'the store folder (default: CHECKOUT_STORE)')
    .option('--json', 'JSON output')
    .action(async (options: { dir?: string; json?: boolean }) => {
      const dir = storeDir(io, options.dir, 'check');
      const problems = await withStore(dir, (opened) => opened.integrityCheck());
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
    .command('backup <file>')
    .description('write a consistent copy of the store to <file> (safe while serve runs)')
    .option('--dir <dir>', 'the store folder (default: CHECKOUT_STORE)')
    .option('--json', 'JSON output')
    .action(async (file: string, options: { dir?: string; json?: boolean }) => {
      const dir = storeDir(io, options.dir, 'backup');
      const destination = resolve(io.cwd, file);
      await withStore(dir, (opened) => opened.backup(destination));
      output(io, options.json ?? false, { dir, backup: destination }, () => `store ${dir}: backed up to ${destination}`);
    });
};

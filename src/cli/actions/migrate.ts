import { loadConfig } from '../../config/index.js';
import { ConfigError, NoStoreError, StoreError } from '../../errors/index.js';
import { silentLogger } from '../../log/index.js';
import { fileStoreDir, fileStoreExists } from '../../store/open.js';
import { PostgresStore, type MigrationReport } from '../../store/postgres/index.js';
import type { SqlStore } from '../../store/sql/sql-store.js';
import { SqliteStore } from '../../store/sqlite/sqlite-store.js';
import { output, type CliIO } from '../io.js';

const POSTGRES_URL = /^postgres(ql)?:\/\//;

type MigrateResult = MigrationReport & { store: string };

function human(result: MigrateResult): string {
  const lines = [result.store];
  for (const migration of result.applied) lines.push(`applied ${migration.version}: ${migration.name}`);
  lines.push(
    result.applied.length === 0
      ? `up to date at version ${result.current} (nothing to apply)`
      : `now at version ${result.current}; versions recorded: ${result.versions.map((row) => row.version).join(', ')}`,
  );
  return lines.join('\n');
}

/** The store CHECKOUT_STORE names, opened to be migrated: PostgreSQL, or an embedded store that exists. */
async function storeToMigrate(url: string, cwd: string): Promise<SqlStore> {
  if (POSTGRES_URL.test(url)) return new PostgresStore({ connectionString: url, migrate: false, logger: silentLogger });
  if (url.startsWith('file:')) {
    const dir = fileStoreDir(url, cwd);
    if (!(await fileStoreExists(dir))) throw new NoStoreError(`No store at ${dir} (CHECKOUT_STORE=${url}): nothing to migrate. Check CHECKOUT_STORE.`);
    return new SqliteStore({ dir });
  }
  // Only the scheme: a store URL may carry credentials.
  const scheme = /^[a-z][a-z0-9+.-]*:/i.exec(url)?.[0] ?? 'that';
  throw new ConfigError(`migrate is for file: and postgres:// stores, but CHECKOUT_STORE is a ${scheme} store, which keeps nothing to migrate.`);
}

/**
 * `checkout-kit migrate`: apply the store's pending migrations. The embedded store is also brought
 * up to date by any command that opens it to write (`serve`, `reconcile`); this is the explicit step,
 * and the only one for PostgreSQL, where `serve` may be told not to migrate.
 */
export async function migrate(options: { json?: boolean }, io: CliIO): Promise<void> {
  const url = loadConfig({ env: io.env, cwd: io.cwd }).store;
  let store: SqlStore | undefined;
  let report: MigrationReport;
  try {
    store = await storeToMigrate(url, io.cwd);
    report = await store.migrate();
  } catch (error) {
    const what = store?.description ?? url;
    const stopped = 'so migrate stopped (each version is applied whole or not at all; those applied before it stay)';
    if (error instanceof StoreError && error.reason === 'busy') {
      throw new StoreError(
        `${what} is busy: another process (serve, a cron reconcile, a store copy, a database shell) held what migrate needed past its wait, ${stopped}. Run \`checkout-kit migrate\` again once serve and reconcile are stopped or idle.`,
        { cause: error, reason: 'busy' },
      );
    }
    if (error instanceof StoreError && error.reason === 'disk_full') {
      throw new StoreError(`The disk holding ${what} is full, ${stopped}. Free some space, then run \`checkout-kit migrate\` again.`, {
        cause: error,
        reason: 'disk_full',
      });
    }
    if (store === undefined || error instanceof ConfigError) throw error;
    throw new StoreError(`Could not migrate ${store.description}: ${(error as Error).message}`, { cause: error });
  } finally {
    await store?.close();
  }
  output(io, options.json ?? false, { store: store.description, ...report }, human);
}

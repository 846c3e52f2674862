import { loadConfig } from '../../config/index.js';
import { ConfigError, StoreError } from '../../errors/index.js';
import { silentLogger } from '../../log/index.js';
import { PostgresStore, type MigrationReport } from '../../store/postgres/index.js';
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

/** `checkout-kit migrate`: apply the PostgreSQL store's pending migrations. */
export async function migrate(options: { json?: boolean }, io: CliIO): Promise<void> {
  const config = loadConfig({ env: io.env, cwd: io.cwd });
  if (!POSTGRES_URL.test(config.store)) {
    // Only the scheme: a store URL may carry credentials.
    const scheme = /^[a-z][a-z0-9+.-]*:/i.exec(config.store)?.[0] ?? 'that';
    throw new ConfigError(`migrate is for PostgreSQL stores, but CHECKOUT_STORE is a ${scheme} store: set CHECKOUT_STORE=postgres://user@host:5432/database.`);
  }
  const store = new PostgresStore({ connectionString: config.store, migrate: false, logger: silentLogger });
  let report: MigrationReport;
  try {
    report = await store.migrate();
  } catch (error) {
    throw new StoreError(`Could not migrate ${store.description}: ${(error as Error).message}`, { cause: error });
  } finally {
    await store.close();
  }
  output(io, options.json ?? false, { store: store.description, ...report }, human);
}

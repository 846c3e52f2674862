import { loadConfig } from '../../config/index.js';
import { ConfigError, StoreError } from '../../errors/index.js';
import { silentLogger } from '../../log/index.js';
import { PostgresStore, type MigrationReport } from '../../store/postgres/index.js';
import { output } from '../io.js';
import type { Register } from '../register.js';

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

/**
 * `checkout-kit migrate`: bring the PostgreSQL store's schema (CHECKOUT_STORE) to this version.
 * Stores also migrate when they open; this command lets a deploy do it once, up front, and lets
 * instances run with `migrate: false` and a role that cannot change the schema.
 */
export const registerMigrate: Register = (program, io) => {
  program
    .command('migrate')
    .description('apply pending schema migrations to the PostgreSQL store (CHECKOUT_STORE=postgres://…)')
    .option('--json', 'print the result as JSON')
    .action(async (options: { json?: boolean }) => {
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
    });
};

import { StoreError } from '../../errors/index.js';
import type { Database, Statement } from './database.js';
import type { Dialect } from './dialect.js';
import { LATEST_VERSION, MIGRATIONS, type AppliedMigration, type Migration, type MigrationReport } from './migrations.js';

/** The table recording which versions are applied. */
export const migrationsTable = (dialect: Dialect) =>
  `CREATE TABLE IF NOT EXISTS ${dialect.prefix}schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at ${dialect.types.time} NOT NULL)`;

/** The statement recording `migration` as applied now. */
export const recordMigration = (dialect: Dialect, migration: Migration): Statement => ({
  text: `INSERT INTO ${dialect.prefix}schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)`,
  values: [migration.version, migration.name, new Date().toISOString()],
});

/** The highest version applied, 0 for a new store. */
export const versionOf = (versions: readonly AppliedMigration[]) => Math.max(0, ...versions.map((row) => row.version));

/** Versions recorded in `schema_migrations`, or none when the store is new. */
export async function appliedMigrations(db: Database, dialect: Dialect): Promise<AppliedMigration[]> {
  const found = await db.query(dialect.tableExists('schema_migrations'));
  if (found.rows.length === 0) return [];
  const rows = await db.query<{ version: number; name: string; applied_at: Date | string }>({
    text: `SELECT version, name, applied_at FROM ${dialect.prefix}schema_migrations ORDER BY version`,
  });
  return rows.rows.map((row) => ({ version: Number(row.version), name: row.name, appliedAt: new Date(row.applied_at).toISOString() }));
}

/**
 * Refuse a store that a newer checkout-kit has migrated past `LATEST_VERSION`: this one would read
 * and write it by older rules than its tables were made for.
 */
export function refuseNewerSchema(versions: readonly AppliedMigration[], schema: string): void {
  const newest = versionOf(versions);
  if (newest > LATEST_VERSION) {
    throw new StoreError(
      `The store ${schema} was written by a newer checkout-kit (schema version ${newest}; this one knows up to ${LATEST_VERSION}): upgrade checkout-kit, or restore a backup this version made.`,
    );
  }
}

/**
 * Bring the store up to `LATEST_VERSION`. Each migration runs in its own transaction, which first
 * serialises migrators (PostgreSQL: an advisory lock; SQLite: the write lock), then re-checks what
 * is applied: instances starting together apply every version exactly once. Safe on every start:
 * an up-to-date store costs two reads.
 */
export async function runMigrations(db: Database, dialect: Dialect, schema: string): Promise<MigrationReport> {
  const before = await appliedMigrations(db, dialect);
  refuseNewerSchema(before, schema);
  const known = new Set(before.map((row) => row.version));
  const applied: MigrationReport['applied'] = [];
  for (const migration of MIGRATIONS) {
    if (known.has(migration.version)) continue;
    const ran = await db.transaction(async (tx) => {
      for (const text of dialect.migrationPrelude()) await tx.query({ text });
      await tx.query({ text: migrationsTable(dialect) });
      const done = await tx.query({ text: `SELECT 1 AS present FROM ${dialect.prefix}schema_migrations WHERE version = $1`, values: [migration.version] });
      if (done.rows.length > 0) return false;
      for (const text of migration.statements(dialect)) await tx.query({ text });
      await tx.query(recordMigration(dialect, migration));
      return true;
    });
    if (ran) applied.push({ version: migration.version, name: migration.name });
  }
  const versions = await appliedMigrations(db, dialect);
  return { schema, applied, versions, current: versionOf(versions) };
}

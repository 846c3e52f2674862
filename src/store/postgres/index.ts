/**
 * The PostgreSQL store: one database shared by every instance (receivers, reconcilers, the CLI),
 * with its schema migrations built in.
 */
export { PostgresStore } from './postgres-store.js';
export type { PostgresStoreOptions } from './postgres-store.js';
export { poolDatabase } from './database.js';
export type { Database, Queryable, QueryResult, Statement } from './database.js';
export { MIGRATIONS, LATEST_VERSION } from './migrations.js';
export type { Migration, MigrationReport, AppliedMigration } from './migrations.js';

/**
 * The PostgreSQL store: one database shared by every instance (receivers, reconcilers, the CLI),
 * with its schema migrations built in.
 * @module checkout-kit/postgres
 */
export { PostgresStore } from './postgres-store.js';
export type { PostgresStoreOptions } from './postgres-store.js';
export { poolDatabase } from './database.js';
export type { Database, Queryable, QueryResult, Statement } from '../sql/database.js';
export { MIGRATIONS, LATEST_VERSION } from '../sql/migrations.js';
export type { Migration, MigrationReport, AppliedMigration } from '../sql/migrations.js';

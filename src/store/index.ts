/** The storage seam and its SQL implementations: SQLite (embedded, memory) and PostgreSQL. */
export { OUTCOME_RANK } from './types.js';
export type {
  Store,
  StoredEvent,
  NewEvent,
  Run,
  NewRun,
  ResourceKind,
  ResourceRecord,
  ResourceUpdate,
  ResourceUpdateOptions,
  Outcome,
  NewsSource,
  CheckoutAttempt,
  TenantMerchant,
  NewTenantMerchant,
  DeadLetter,
  EventFilter,
  RunFilter,
  RunCountFilter,
  ResourceFilter,
  ResourceSearch,
  ResourceListing,
  HandlerState,
  ClaimOptions,
  FailOptions,
  PruneOptions,
  Activity,
  NewActivity,
  ActivityFilter,
  StoreSummary,
} from './types.js';
export { MemoryStore } from './memory-store.js';
export { SqliteStore, STORE_FILE } from './sqlite/sqlite-store.js';
export type { SqliteStoreOptions } from './sqlite/sqlite-store.js';
export { SqlStore } from './sql/sql-store.js';
export { openStore } from './open.js';
export type { OpenStoreOptions } from './open.js';
export { PostgresStore, poolDatabase, MIGRATIONS, LATEST_VERSION } from './postgres/index.js';
export type { PostgresStoreOptions, Database, Queryable, MigrationReport } from './postgres/index.js';

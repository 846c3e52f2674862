/**
 * `checkout-kit/store`: the storage seam (`Store`, its records and the keys of its runs) and the
 * embedded backends, SQLite on a file or in memory. `openStore` (in the package root) picks the
 * backend from a URL; the PostgreSQL store is `checkout-kit/postgres`.
 * @module checkout-kit/store
 */
export { OUTCOME_RANK } from './types.js';
export type {
  Store,
  EventLog,
  RunQueue,
  Resources,
  CheckoutAttempts,
  TenantMerchants,
  TenantCredentialsStore,
  Locks,
  OperatorViews,
  StoredEvent,
  NewEvent,
  Run,
  NewRun,
  RunStatus,
  ResourceKind,
  ResourceRecord,
  ResourceUpdate,
  ResourceUpdateOptions,
  Outcome,
  NewsSource,
  CheckoutAttempt,
  NewCheckoutAttempt,
  TenantMerchant,
  NewTenantMerchant,
  SealedTenantCredentials,
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
export { runKeys, parseRunKey, HANDLER_OUTCOMES } from '../domain/index.js';
export type { RunKey, EventRunKey, FulfillmentRunKey, ParsedRunKey, HandlerOutcome } from '../domain/index.js';
export { MemoryStore } from './memory-store.js';
export { SqliteStore } from './sqlite/sqlite-store.js';
export type { BackupReport, SqliteStoreOptions } from './sqlite/sqlite-store.js';
export type { SqliteDriverName } from './sqlite/driver.js';

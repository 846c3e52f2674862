/** The storage seam and its implementations. */
export { OUTCOME_RANK, ACTIVITY_KEPT_PER_SUBJECT } from './types.js';
export type {
  Store,
  StoredEvent,
  NewEvent,
  Run,
  NewRun,
  ResourceKind,
  ResourceRecord,
  ResourceUpdate,
  Outcome,
  NewsSource,
  CheckoutAttempt,
  DeadLetter,
  EventFilter,
  RunFilter,
  RunCountFilter,
  ResourceFilter,
  ClaimOptions,
  FailOptions,
  PruneOptions,
  Activity,
  NewActivity,
  ActivityFilter,
  StoreSummary,
} from './types.js';
export { MemoryStore } from './memory-store.js';
export { StateStore } from './state-store.js';
export { StoreState, emptyStateData } from './state.js';
export type { Op, StateData, LiveStateData, EventRecord, BodyRef } from './state.js';
export { EmbeddedStore } from './embedded/index.js';
export type { EmbeddedStoreOptions } from './embedded/index.js';
export { openStore } from './open.js';
export type { OpenStoreOptions } from './open.js';
export { PostgresStore, poolDatabase, MIGRATIONS, LATEST_VERSION } from './postgres/index.js';
export type { PostgresStoreOptions, Database, Queryable, MigrationReport } from './postgres/index.js';

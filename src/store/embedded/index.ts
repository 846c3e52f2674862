/**
 * The embedded store: lowdb snapshot + append-only journal in one folder, safe for several
 * processes at once (see `EmbeddedStore`).
 */
export { EmbeddedStore } from './embedded-store.js';
export type { EmbeddedStoreOptions } from './embedded-store.js';
export { checkStore } from './check.js';
export type { StoreCheckReport, StoreCheckOptions, StoreProblem, StoreProblemKind, SegmentCheck, RecoveryPlan, RecoveryAction } from './check.js';
export { recoverStore } from './recover-store.js';
export type { StoreRecoverOptions, StoreRecoverResult } from './recover-store.js';

/** One reconcile pass: poll what the webhooks may have missed. */
export { reconcile, RECONCILE_LOCK } from './reconcile.js';
export type { ReconcileSummary } from './reconcile.js';
export { normalizeReconcileOptions } from './reconcile-options.js';
export type { ReconcileOptions, NormalizedReconcileOptions } from './reconcile-options.js';
export { RECONCILE_SUBJECT, ReconcilePassSchema, recentPasses, recordPass } from './passes.js';
export type { ReconcilePass, RecordedPass } from './passes.js';

/**
 * The embedded store: lowdb snapshot + append-only journal in one folder, safe for several
 * processes at once (see `EmbeddedStore`).
 */
export { EmbeddedStore } from './embedded-store.js';
export type { EmbeddedStoreOptions } from './embedded-store.js';

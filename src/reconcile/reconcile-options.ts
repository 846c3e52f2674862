import type { FulfillmentEngine } from '../fulfillment/index.js';
import type { Logger } from '../log/index.js';
import { numberOption } from '../runs/index.js';
import type { Environment, Invoice } from '../schemas/index.js';
import type { Store } from '../store/index.js';

/**
 * @example
 * await reconcile({ store, engine, listInvoices: () => client.invoices.list() })
 */
export interface ReconcileOptions {
  store: Store;
  engine: FulfillmentEngine;
  /** Lists recent invoices, to find ones the store never heard of. @default none (no discovery) */
  listInvoices?: (() => Promise<Invoice[]>) | undefined;
  /**
   * The environment of the keys the engine reads with. An open resource stored from the other one (a
   * store kept from testing when the shop goes live) is never shown to them: its 404 closes it. @default unknown
   */
  environment?: Environment | undefined;
  /** Poll only resources whose last news is older than this. @default 600000 (10 minutes) */
  olderThanMs?: number;
  /** Polls in flight at once. @default 8 */
  concurrency?: number;
  /** Most open resources polled in one pass. @default 100000 */
  limit?: number;
  /**
   * Partner platforms: most open payments of one merchant polled in one pass; the rest wait for the
   * next pass, and merchants are polled in turn (see `fairShare`). @default 1000
   */
  perMerchant?: number;
  /** Lock lease, renewed while the pass runs. @default 120000 */
  lockTtlMs?: number;
  /** Called after each resource is polled. @default none */
  onProgress?: ((done: number, total: number) => void) | undefined;
  /** @default the engine's logger */
  logger?: Logger;
  /** @default the engine's clock (one clock for the pass, its lock and the engine's decisions) */
  clock?: () => Date;
}

export type NormalizedReconcileOptions = Required<Omit<ReconcileOptions, 'listInvoices' | 'onProgress' | 'environment'>> &
  Pick<ReconcileOptions, 'listInvoices' | 'onProgress' | 'environment'>;

/** Defaults applied and values checked up front, so a bad option fails before the pass takes its lock. */
export function normalizeReconcileOptions(options: ReconcileOptions): NormalizedReconcileOptions {
  const number = (name: keyof ReconcileOptions, value: number | undefined, fallback: number, minimum = 1) =>
    numberOption('Reconcile', name, value ?? fallback, minimum);
  return {
    store: options.store,
    engine: options.engine,
    listInvoices: options.listInvoices,
    environment: options.environment,
    olderThanMs: number('olderThanMs', options.olderThanMs, 600_000, 0),
    concurrency: number('concurrency', options.concurrency, 8),
    limit: number('limit', options.limit, 100_000),
    perMerchant: number('perMerchant', options.perMerchant, 1_000),
    lockTtlMs: number('lockTtlMs', options.lockTtlMs, 120_000),
    onProgress: options.onProgress,
    logger: options.logger ?? options.engine.logger,
    clock: options.clock ?? options.engine.clock,
  };
}

import pMap from 'p-map';
import type { FulfillmentEngine } from '../fulfillment/index.js';
import { silentLogger, type Logger } from '../log/index.js';
import type { Invoice } from '../schemas/index.js';
import type { ResourceKind, Store } from '../store/index.js';
import { recordPass } from './passes.js';

/** The lock name one reconcile pass holds. */
export const RECONCILE_LOCK = 'reconcile';

export interface ReconcileOptions {
  store: Store;
  engine: FulfillmentEngine;
  /** Lists recent invoices, to find ones the store never heard of. Omit to skip that scan. */
  listInvoices?: (() => Promise<Invoice[]>) | undefined;
  /** Poll only resources whose last news is older than this. @default 600000 (10 minutes) */
  olderThanMs?: number;
  /** Polls in flight at once. @default 8 */
  concurrency?: number;
  /** Most open resources polled in one pass. @default 100000 */
  limit?: number;
  /** Lock lease, renewed while the pass runs. @default 120000 */
  lockTtlMs?: number;
  /** Called after each resource is polled. */
  onProgress?: (done: number, total: number) => void;
  logger?: Logger;
  /** @default the engine's clock (one clock for the pass, its lock and the engine's decisions) */
  clock?: () => Date;
}

export interface ReconcileSummary {
  /** True when another pass held the lock: nothing was done. */
  skipped: boolean;
  /** Resources polled. */
  checked: number;
  /** Resources whose outcome moved forward. */
  advanced: number;
  /** Handler calls completed in this pass (polls and due retries). */
  fulfilled: number;
  /** Outcomes first learned by polling: news the webhooks did not bring. */
  missedByWebhooks: number;
  /** Invoices found by List invoices that the store had never seen. */
  discovered: number;
  /** Due handler runs re-run (retries after a throw, or runs whose worker died). */
  retried: number;
  /** Handler runs that failed for good in this pass, plus polls that errored. */
  failed: number;
  /** Handler runs waiting for `checkout-kit retry` (failed for good, in any pass). */
  awaitingRetry: number;
  errors: Array<{ kind: ResourceKind; id: string; error: string }>;
  durationMs: number;
}

/**
 * One reconcile pass (for cron): poll every open resource whose last news is older than
 * `olderThanMs`, feed what the service says into the fulfillment engine, re-run due handler runs,
 * and look for invoices never seen. Only one pass runs at a time per store.
 */
export async function reconcile(options: ReconcileOptions): Promise<ReconcileSummary> {
  const { store, engine } = options;
  const logger = options.logger ?? silentLogger;
  const clock = options.clock ?? engine.clock;
  // A duration, not a date: the monotonic clock.
  const started = performance.now();
  const summary: ReconcileSummary = {
    skipped: false,
    checked: 0,
    advanced: 0,
    fulfilled: 0,
    missedByWebhooks: 0,
    discovered: 0,
    retried: 0,
    failed: 0,
    awaitingRetry: 0,
    errors: [],
    durationMs: 0,
  };
  const ttl = options.lockTtlMs ?? 120_000;
  if (!(await store.acquireLock(RECONCILE_LOCK, engine.owner, ttl, clock()))) {
    logger.info('another reconcile pass is running; nothing done');
    return { ...summary, skipped: true };
  }
  const renew = setInterval(() => {
    store.acquireLock(RECONCILE_LOCK, engine.owner, ttl, clock()).catch((error: Error) => logger.warn({ error: error.message }, 'could not renew the reconcile lock'));
  }, ttl / 3);
  renew.unref();
  // Named in the pass's record (the console and the missed-webhooks alert show them).
  const missed: Array<{ kind: ResourceKind; id: string }> = [];
  try {
    const work = await collectWork(options, clock(), summary, logger);
    let done = 0;
    options.onProgress?.(0, work.length);
    await pMap(
      work,
      async ({ kind, id }) => {
        try {
          const result = await engine.process({ kind, id, source: 'reconcile' });
          summary.checked += 1;
          if (result.advanced) summary.advanced += 1;
          if (result.advanced && result.outcome !== 'pending') {
            summary.missedByWebhooks += 1;
            if (missed.length < 20) missed.push({ kind, id });
          }
          if (result.run === 'completed') summary.fulfilled += 1;
          if (result.run === 'failed') summary.failed += 1;
        } catch (error) {
          summary.failed += 1;
          summary.errors.push({ kind, id, error: (error as Error).message });
          logger.warn({ kind, id, error: (error as Error).message }, 'could not reconcile');
        } finally {
          done += 1;
          options.onProgress?.(done, work.length);
        }
      },
      { concurrency: options.concurrency ?? 8 },
    );

    const due = await engine.runDue(10_000);
    summary.retried = due.completed + due.retrying + due.failed + due['no-handler'] + due.superseded;
    summary.fulfilled += due.completed;
    summary.failed += due.failed;
    summary.awaitingRetry = (await store.listRuns({ kind: 'fulfillment', status: 'failed', limit: 100_000 })).length;
  } catch (error) {
    await recordPass(store, { ok: false, error: (error as Error).message, durationMs: Math.round(performance.now() - started) }, clock(), logger);
    throw error;
  } finally {
    clearInterval(renew);
    await store.releaseLock(RECONCILE_LOCK, engine.owner, clock());
  }
  summary.durationMs = Math.round(performance.now() - started);
  const { skipped: _skipped, retried: _retried, errors, ...counts } = summary;
  await recordPass(store, { ok: true, ...counts, missed, errors: errors.slice(0, 5) }, clock(), logger);
  return summary;
}

/** Open resources with old news, plus invoices the store has never seen. */
async function collectWork(options: ReconcileOptions, now: Date, summary: ReconcileSummary, logger: Logger): Promise<Array<{ kind: ResourceKind; id: string }>> {
  const cutoff = new Date(now.getTime() - (options.olderThanMs ?? 600_000)).toISOString();
  const open = await options.store.listResources({ open: true, lastNewsBefore: cutoff, limit: options.limit ?? 100_000 });
  const work = open.map(({ kind, id }) => ({ kind, id }));
  if (options.listInvoices) {
    try {
      for (const invoice of await options.listInvoices()) {
        if (await options.store.getResource('invoice', invoice.id)) continue;
        summary.discovered += 1;
        work.push({ kind: 'invoice', id: invoice.id });
      }
    } catch (error) {
      logger.warn({ error: (error as Error).message }, 'could not list invoices; skipping discovery this pass');
    }
  }
  return work;
}

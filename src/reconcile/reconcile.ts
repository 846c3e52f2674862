import pMap from 'p-map';
import { ApiError, isOffSpec, messageOf } from '../errors/index.js';
import type { Logger } from '../log/index.js';
import { keepRenewing } from '../runs/index.js';
import type { ResourceKind } from '../store/index.js';
import { fairShare } from './fair-share.js';
import { recordPass } from './passes.js';
import { normalizeReconcileOptions, type NormalizedReconcileOptions, type ReconcileOptions } from './reconcile-options.js';

/** The lock name one reconcile pass holds. */
export const RECONCILE_LOCK = 'reconcile';

/** What one reconcile pass did: resources polled, outcomes advanced, handlers run, news the webhooks missed. */
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
  /**
   * Resources the service answered 404 for (an event for a payment of another account or
   * environment, or a sample): closed, so later passes stop asking; news of them still counts.
   * Only in a pass where another read succeeded; else they count as `failed`.
   */
  unknownToService: number;
  /** Partner platforms: open payments left for a later pass by the bound on one merchant's share (`perMerchant`). */
  deferred: number;
  /** Each read that failed: a resource's poll, or List invoices (`kind: 'invoice'`, `id: '(list)'`). */
  errors: Array<{ kind: ResourceKind; id: string; error: string }>;
  durationMs: number;
}

/**
 * One reconcile pass (for cron): poll every open resource whose last news is older than
 * `olderThanMs`, feed what the service says into the fulfillment engine, re-run due handler runs,
 * and look for invoices never seen. Only one pass runs at a time per store.
 */
export async function reconcile(input: ReconcileOptions): Promise<ReconcileSummary> {
  const options = normalizeReconcileOptions(input);
  const { store, engine, logger, clock } = options;
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
    unknownToService: 0,
    deferred: 0,
    errors: [],
    durationMs: 0,
  };
  const ttl = options.lockTtlMs;
  const acquire = () => store.acquireLock(RECONCILE_LOCK, engine.owner, ttl, clock());
  if (!(await acquire())) {
    logger.info('another reconcile pass is running; nothing done');
    return { ...summary, skipped: true };
  }
  const stopRenewing = keepRenewing({
    ttlMs: ttl,
    renew: acquire,
    onLost: (reason, error) => logger.warn({ reason, err: error }, 'could not renew the reconcile lock'),
  });
  // Named in the pass's record (the console and the missed-webhooks alert show them).
  const missed: Array<{ kind: ResourceKind; id: string }> = [];
  /** Resources the service answered 404 for in this pass. */
  const unknown: Array<{ kind: ResourceKind; id: string; error: ApiError }> = [];
  const pollFailed = (kind: ResourceKind, id: string, error: unknown, why = (error as Error).message) => {
    summary.failed += 1;
    summary.errors.push({ kind, id, error: why });
    logger.warn({ kind, id, err: error }, 'could not reconcile');
  };
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
          // Only the spec's 404: an HTML one is another server's (a gateway routing elsewhere), which says nothing of the resource.
          if (error instanceof ApiError && error.status === 404 && !isOffSpec(error)) {
            // Decided once the pass is over: see below.
            unknown.push({ kind, id, error });
            return;
          }
          pollFailed(kind, id, error);
        } finally {
          done += 1;
          options.onProgress?.(done, work.length);
        }
      },
      { concurrency: options.concurrency },
    );

    // A 404 would come every pass, each an error: close the resource, so reconcile stops asking.
    // Only when another read of this pass succeeded: a CHECKOUT_BASE_URL with a wrong path answers
    // 404 for everything, and closing every open payment then would hide the ones paid meanwhile.
    for (const { kind, id, error } of unknown) {
      // Stored from the other environment's keys (a store kept from testing after going live): these keys never see it.
      const stored = options.environment === undefined ? undefined : (await store.getResource(kind, id))?.environment;
      const otherEnvironment = stored !== undefined && stored !== options.environment;
      if (!otherEnvironment && summary.checked === 0) {
        pollFailed(kind, id, error, `${error.message} (no read of this pass succeeded, so it stays open: if every read answers 404, check CHECKOUT_BASE_URL)`);
        continue;
      }
      await store.updateResource({ kind, id, source: 'reconcile', open: false }, clock());
      summary.unknownToService += 1;
      logger.warn(
        { kind, id, err: error },
        otherEnvironment
          ? `${kind} ${id} is a ${stored} ${kind}, which the service does not show to these ${options.environment} keys (404): closed, so reconcile stops asking`
          : `the service does not know ${kind} ${id} (404): closed, so reconcile stops asking; news of it from a webhook is still handled`,
      );
    }

    const due = await engine.runDue(10_000);
    summary.retried = due.completed + due.retrying + due.failed + due['no-handler'] + due.superseded;
    summary.fulfilled += due.completed;
    summary.failed += due.failed;
    summary.awaitingRetry = await store.countRuns({ kind: 'fulfillment', status: 'failed' });
  } catch (error) {
    await recordPass(store, { ok: false, error: (error as Error).message, durationMs: Math.round(performance.now() - started) }, clock(), logger);
    throw error;
  } finally {
    stopRenewing();
    await store.releaseLock(RECONCILE_LOCK, engine.owner, clock());
  }
  summary.durationMs = Math.round(performance.now() - started);
  const { skipped: _skipped, retried: _retried, errors, ...counts } = summary;
  await recordPass(store, { ok: true, ...counts, missed, errors: errors.slice(0, 5) }, clock(), logger);
  return summary;
}

/** Open resources with old news, plus invoices the store has never seen. */
async function collectWork(
  options: NormalizedReconcileOptions,
  now: Date,
  summary: ReconcileSummary,
  logger: Logger,
): Promise<Array<{ kind: ResourceKind; id: string }>> {
  const cutoff = new Date(now.getTime() - options.olderThanMs).toISOString();
  const open = await options.store.listResources({ open: true, lastNewsBefore: cutoff, limit: options.limit });
  const { work, deferred } = fairShare(open, options.perMerchant);
  summary.deferred = deferred;
  if (options.listInvoices) {
    try {
      for (const invoice of await options.listInvoices()) {
        if (await options.store.getResource('invoice', invoice.id)) continue;
        summary.discovered += 1;
        work.push({ kind: 'invoice', id: invoice.id });
      }
    } catch (error) {
      // A failed poll like any other: a service that cannot be reached must not pass for a clean pass (exit 0).
      summary.failed += 1;
      summary.errors.push({ kind: 'invoice', id: '(list)', error: messageOf(error) });
      logger.warn({ err: error }, 'could not list invoices; skipping discovery this pass');
    }
  }
  return work;
}

import { z } from 'zod';
import type { Logger } from '../log/index.js';
import type { Store } from '../store/index.js';

/** The timeline subject every reconcile pass is recorded under. */
export const RECONCILE_SUBJECT = 'reconcile';

/**
 * What a pass leaves in the store for the console, the metrics and the alerts, which run in other
 * processes than the cron job. Read back tolerant of fields older versions lack.
 */
export const ReconcilePassSchema = z.looseObject({
  /** False when the pass stopped on an error (the store or the lock failed). */
  ok: z.boolean(),
  error: z.string().optional(),
  checked: z.number().default(0),
  advanced: z.number().default(0),
  fulfilled: z.number().default(0),
  missedByWebhooks: z.number().default(0),
  discovered: z.number().default(0),
  failed: z.number().default(0),
  awaitingRetry: z.number().default(0),
  /** Resources the service answered 404 for, closed. */
  unknownToService: z.number().default(0),
  durationMs: z.number().default(0),
  /** Up to 20 resources whose outcome this pass learned first: news the webhooks did not bring. */
  missed: z.array(z.looseObject({ kind: z.string(), id: z.string() })).default([]),
  /** Up to 5 polls that failed. */
  errors: z.array(z.looseObject({ kind: z.string(), id: z.string(), error: z.string() })).default([]),
});
export type ReconcilePass = z.infer<typeof ReconcilePassSchema>;
export type RecordedPass = ReconcilePass & { at: string };

/** Keep one pass's record; a store that refuses is logged, never fails the pass. */
export async function recordPass(store: Store, pass: z.input<typeof ReconcilePassSchema>, now: Date, logger: Logger): Promise<void> {
  try {
    await store.appendActivity({ subject: RECONCILE_SUBJECT, kind: 'reconcile', data: pass as Record<string, unknown> }, now);
  } catch (error) {
    logger.warn({ err: error }, `could not record the reconcile pass for the console: ${String(error)}`);
  }
}

/** The latest pass and the latest one that ran to its end, among the last `lookBack` recorded. */
export async function recentPasses(
  store: Store,
  lookBack = 20,
): Promise<{ last: RecordedPass | undefined; lastSuccess: RecordedPass | undefined; passes: RecordedPass[] }> {
  const passes = (await store.listActivity({ subject: RECONCILE_SUBJECT, limit: lookBack })).flatMap((entry) => {
    const parsed = ReconcilePassSchema.safeParse(entry.data);
    return parsed.success ? [{ ...parsed.data, at: entry.at }] : [];
  });
  return { last: passes[0], lastSuccess: passes.find((pass) => pass.ok), passes };
}

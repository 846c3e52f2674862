import { z } from 'zod';
import type { WebhookVerificationReason } from '../errors/index.js';
import type { Logger } from '../log/index.js';
import type { Store } from '../store/index.js';

/** The timeline subject receivers record their verification failures under. */
export const RECEIVER_SUBJECT = 'receiver';

const TallySchema = z.looseObject({ instance: z.string(), counts: z.record(z.string(), z.number()) });

/** Verification failures by reason over a window, summed over every receiver sharing the store. */
export interface VerificationFailures {
  total: number;
  byReason: Record<string, number>;
}

/**
 * Counts a receiver's verification failures and writes them to the store every `everyMs` (only
 * when there were some), so that the console and the alerts of any process see every receiver's.
 * Counts, never the deliveries: a flood of forged requests costs one small write per interval.
 */
export class VerificationLog {
  private counts = new Map<string, number>();

  constructor(private readonly options: { store: Store; clock: () => Date; instance: string; logger: Logger }) {}

  /** Count one failure (call from the delivery observer). */
  count(reason: WebhookVerificationReason): void {
    this.counts.set(reason, (this.counts.get(reason) ?? 0) + 1);
  }

  /** Write what was counted since the last flush. */
  async flush(): Promise<void> {
    if (this.counts.size === 0) return;
    const counts = Object.fromEntries(this.counts);
    this.counts = new Map();
    try {
      await this.options.store.appendActivity(
        { subject: RECEIVER_SUBJECT, kind: 'verification', data: { instance: this.options.instance, counts } },
        this.options.clock(),
      );
    } catch (error) {
      this.options.logger.warn({ err: String(error) }, `could not record verification failures: ${String(error)}`);
    }
  }
}

/** Verification failures recorded since `since` (ISO), from the newest 500 tallies. */
export async function verificationFailuresSince(store: Store, since: string): Promise<VerificationFailures> {
  const byReason: Record<string, number> = {};
  let total = 0;
  for (const entry of await store.listActivity({ subject: RECEIVER_SUBJECT, limit: 500 })) {
    if (entry.at < since) break;
    const tally = TallySchema.safeParse(entry.data);
    if (!tally.success) continue;
    for (const [reason, count] of Object.entries(tally.data.counts)) {
      byReason[reason] = (byReason[reason] ?? 0) + count;
      total += count;
    }
  }
  return { total, byReason };
}

import type { ResourceKind, ResourceRecord } from '../store/index.js';

/** The merchant a partner platform's payment belongs to, as the service's answers say (`merchantId`). */
const merchantOf = (record: ResourceRecord): string | undefined => {
  const merchantId = (record.snapshot as { merchantId?: unknown } | undefined)?.merchantId;
  return typeof merchantId === 'string' ? merchantId : undefined;
};

/**
 * A pass's work, fair between a partner platform's merchants: at most `perMerchant` resources of
 * each merchant (the rest wait for a later pass), taken in turn, one merchant's then the next's, so
 * that a tenant with 10,000 open payments neither starves nor delays the others. Resources without a
 * merchant (a merchant's own shop) are one more group, never capped. Order within a group is kept.
 */
export function fairShare(open: readonly ResourceRecord[], perMerchant: number): { work: Array<{ kind: ResourceKind; id: string }>; deferred: number } {
  const groups = new Map<string | undefined, ResourceRecord[]>();
  for (const record of open) {
    const merchant = merchantOf(record);
    const group = groups.get(merchant) ?? [];
    groups.set(merchant, group);
    group.push(record);
  }
  let deferred = 0;
  const queues = [...groups].map(([merchant, records]) => {
    const taken = merchant === undefined ? records : records.slice(0, perMerchant);
    deferred += records.length - taken.length;
    return taken;
  });
  const work: Array<{ kind: ResourceKind; id: string }> = [];
  for (let i = 0; queues.some((queue) => i < queue.length); i++) {
    for (const queue of queues) if (i < queue.length) work.push({ kind: queue[i]!.kind, id: queue[i]!.id });
  }
  return { work, deferred };
}

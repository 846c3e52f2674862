import { describe, expect, it } from 'vitest';
import { fairShare } from '../../src/reconcile/fair-share.js';
import type { ResourceRecord } from '../../src/store/index.js';

const record = (id: string, merchantId?: string) => ({ kind: 'payment', id, snapshot: merchantId ? { id, merchantId } : { id } }) as unknown as ResourceRecord;

describe("fairShare: one pass's work between a partner platform's merchants", () => {
  it('takes merchants in turn, each up to its share; the rest is deferred to the next pass', () => {
    const open = [...Array.from({ length: 5 }, (_, i) => record(`big-${i}`, 'm-big')), record('small-0', 'm-small'), record('small-1', 'm-small')];
    const { work, deferred } = fairShare(open, 3);
    expect(work.map((w) => w.id)).toEqual(['big-0', 'small-0', 'big-1', 'small-1', 'big-2']);
    expect(deferred).toBe(2);
  });

  it("leaves a merchant's own shop (no merchantId on its payments) uncapped and in order", () => {
    const open = Array.from({ length: 4 }, (_, i) => record(`own-${i}`));
    expect(fairShare(open, 1)).toEqual({ work: open.map(({ kind, id }) => ({ kind, id })), deferred: 0 });
  });
});

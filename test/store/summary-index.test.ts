import { describe, expect, it } from 'vitest';
import { StoreState, type StateData } from '../../src/store/state.js';

// The summary (every metrics scrape, every readiness probe) counts from the state's indexes of
// active and failed runs, not from every run ever stored: the indexes must follow every change.

const T0 = Date.parse('2026-01-01T00:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString();
const event = (i: number) => ({ id: `evt_${i}`, type: 'payment.paid', environment: 'test' as const, createdAt: iso(T0), receivedAt: iso(T0 + i * 1000), resourceKind: 'payment' as const, resourceId: `pay_${i}`, body: '{}' });
const reopened = (state: StoreState) => new StoreState(JSON.parse(JSON.stringify(state.snapshotData())) as StateData);

describe('StoreState.summarize', () => {
  it('counts failed runs of both kinds until they are retried or forgotten, never done ones, and a reopened state agrees', () => {
    const state = new StoreState();
    for (let i = 0; i < 4; i++) state.apply({ t: 'event', at: T0 + i * 1000, event: event(i) });
    state.apply({ t: 'enqueue', at: T0, run: { key: 'payment:pay_0:paid', kind: 'fulfillment', data: {} } });
    // evt_0 done, evt_1 failed for good, evt_2 running; the fulfillment run failed for good.
    for (const [key, end] of [['event:evt_0', 'complete'], ['event:evt_1', 'fail'], ['event:evt_2', undefined], ['payment:pay_0:paid', 'fail']] as const) {
      state.apply({ t: 'claim', at: T0 + 10_000, key, owner: 'w', leaseMs: 60_000 });
      if (end === 'complete') state.apply({ t: 'complete', at: T0 + 11_000, key, owner: 'w' });
      if (end === 'fail') state.apply({ t: 'fail', at: T0 + 11_000, key, owner: 'w', error: 'boom' });
    }
    const now = T0 + 20_000;
    const first = state.summarize(now);
    expect(first.dispatch).toEqual({ pending: 1, running: 1, failed: 1, oldestQueuedAt: iso(T0 + 2000) });
    expect(first.fulfillment).toEqual({ pending: 0, running: 0, failed: 1 });
    expect(reopened(state).summarize(now)).toEqual(first);

    // Retried: pending again, no longer failed, and waiting since its retry (not since its receipt).
    state.apply({ t: 'retry', at: T0 + 21_000, key: 'event:evt_1' });
    expect(state.summarize(now).dispatch).toEqual({ pending: 2, running: 1, failed: 0, oldestQueuedAt: iso(T0 + 2000) });
    // Failed again, then forgotten by a prune: gone from the counts.
    state.apply({ t: 'claim', at: T0 + 22_000, key: 'event:evt_1', owner: 'w', leaseMs: 60_000 });
    state.apply({ t: 'fail', at: T0 + 23_000, key: 'event:evt_1', owner: 'w', error: 'boom' });
    expect(state.summarize(now).dispatch.failed).toBe(1);
    state.apply({ t: 'prune', at: T0 + 24_000, eventsBefore: iso(T0 + 1500) });
    const last = state.summarize(now);
    expect(last.dispatch).toEqual({ pending: 1, running: 1, failed: 0, oldestQueuedAt: iso(T0 + 2000) });
    expect(last.fulfillment.failed).toBe(1);
    expect(reopened(state).summarize(now)).toEqual(last);
  });
});

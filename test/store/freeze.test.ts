import { describe, expect, it } from 'vitest';
import { StoreState, type StateData, type StateMap } from '../../src/store/state.js';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const MAPS: StateMap[] = ['events', 'runs', 'resources', 'attempts', 'locks', 'activity'];

function event(i: number) {
  const at = new Date(T0 + i * 1000).toISOString();
  return { id: `evt_${i}`, type: 'payment.paid', environment: 'test' as const, createdAt: at, receivedAt: at, resourceKind: 'payment' as const, resourceId: `pay_${i}`, body: `{"n":${i}}` };
}

/** A state with events, their runs (some claimed and done), resources, an attempt, a lock and timelines. */
function filled(): StoreState {
  const state = new StoreState();
  for (let i = 0; i < 20; i++) {
    const at = T0 + i * 1000;
    state.apply({ t: 'event', at, event: event(i) });
    state.apply({ t: 'resource', at, update: { kind: 'payment', id: `pay_${i}`, outcome: 'pending', source: 'webhook' } });
    state.apply({ t: 'activity', at, entry: { subject: `payment:pay_${i}`, kind: 'news', data: { n: i } } });
  }
  for (let i = 0; i < 10; i++) state.apply({ t: 'claim', at: T0 + 30_000, key: `event:evt_${i}`, owner: 'w', leaseMs: 60_000 });
  for (let i = 0; i < 5; i++) state.apply({ t: 'complete', at: T0 + 31_000, key: `event:evt_${i}`, owner: 'w' });
  state.apply({ t: 'attempt', at: T0, attempt: { orderId: 'order-1', kind: 'payment', request: {} } as never });
  state.apply({ t: 'lock', at: T0, name: 'reconcile', owner: 'w', ttlMs: 60_000 });
  state.apply({ t: 'dead', at: T0, letter: { id: 'd1', receivedAt: new Date(T0).toISOString(), reason: 'bad', headers: {}, body: '' } as never });
  return state;
}

/** What a frozen view reads back, as plain data. */
function read(frozen: ReturnType<StoreState['freeze']>): StateData {
  const data = { deadLetters: frozen.deadLetters() } as StateData;
  for (const map of MAPS) (data as unknown as Record<string, unknown>)[map] = Object.fromEntries(frozen.entries(map));
  return data;
}

describe('StoreState.freeze', () => {
  it('reads the state as it was at the freeze while every kind of op goes on, and stops keeping pre-images once released', () => {
    const state = filled();
    const atFreeze = JSON.parse(JSON.stringify(state.snapshotData())) as StateData;
    const frozen = state.freeze();
    // Changes in place of records (claims, completions, failures, retries, resources, attempts, locks),
    // additions (events, runs, timelines, dead letters) and deletions (prune, unlock).
    state.apply({ t: 'claim', at: T0 + 40_000, key: 'event:evt_12', owner: 'w', leaseMs: 60_000 });
    state.apply({ t: 'fail', at: T0 + 41_000, key: 'event:evt_7', owner: 'w', error: 'boom' });
    state.apply({ t: 'retry', at: T0 + 42_000, key: 'event:evt_7' });
    state.apply({ t: 'resource', at: T0 + 43_000, update: { kind: 'payment', id: 'pay_3', outcome: 'paid', source: 'webhook' } });
    state.apply({ t: 'attemptDone', at: T0 + 44_000, orderId: 'order-1', resourceId: 'pay_1', checkoutUrl: 'https://pay.example/1' });
    state.apply({ t: 'unlock', at: T0 + 45_000, name: 'reconcile', owner: 'w' });
    state.apply({ t: 'lock', at: T0 + 45_500, name: 'other', owner: 'w', ttlMs: 1000 });
    state.apply({ t: 'event', at: T0 + 46_000, event: event(99) });
    state.apply({ t: 'activity', at: T0 + 47_000, entry: { subject: 'payment:pay_3', kind: 'news', data: { n: 'late' } } });
    state.apply({ t: 'dead', at: T0 + 48_000, letter: { id: 'd2', receivedAt: new Date(T0).toISOString(), reason: 'bad', headers: {}, body: '' } as never });
    // Forget the finished events' ids, and their timelines with them.
    state.apply({ t: 'prune', at: T0 + 49_000, eventsBefore: new Date(T0 + 100_000).toISOString() });
    expect(state.getEvent('evt_0')).toBeUndefined();
    expect(state.getEvent('evt_99')).toBeDefined();

    expect(read(frozen)).toEqual(atFreeze);
    frozen.release();
    const next = state.freeze();
    expect(read(next)).toEqual(JSON.parse(JSON.stringify(state.snapshotData())));
    next.release();
  });

  it('refuses a second frozen view while one is held', () => {
    const state = filled();
    const frozen = state.freeze();
    expect(() => state.freeze()).toThrow(/a frozen view is still held/);
    frozen.release();
    expect(() => state.freeze().release()).not.toThrow();
  });
});

import { describe, expect, it } from 'vitest';
import { StoreState, type StateData } from '../../src/store/state.js';
import type { StoredEvent } from '../../src/store/types.js';

// An event's dispatch run is kept compact from the insert until its first claim (a byte of the
// state's `EventTable`): what a backlog costs in memory. It must read back exactly as a whole run would.

const T0 = Date.parse('2026-01-01T00:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString();

function event(i: number, receivedAt = T0 + i * 1000): StoredEvent {
  return { id: `evt_${i}`, type: 'payment.paid', environment: 'test', createdAt: iso(T0 - 60_000), receivedAt: iso(receivedAt), resourceKind: 'payment', resourceId: `pay_${i}`, body: `{"n":${i}}` };
}

/** The run an `enqueue` op makes at `at`: what a compact run must read back as. */
function wholeRun(i: number, at: number) {
  const state = new StoreState();
  state.apply({ t: 'enqueue', at, run: { key: `event:evt_${i}`, kind: 'event', data: { eventId: `evt_${i}`, type: 'payment.paid' } } });
  return state.getRun(`event:evt_${i}`);
}

/** Whether the event's run is held fresh in the event table (not yet a whole run object). */
const isCompact = (state: StoreState, key: string) => {
  const slot = state.data.events.slotOf(key.slice('event:'.length));
  return slot !== undefined && state.data.events.freshSince(slot) !== undefined;
};

describe('compact dispatch runs', () => {
  it('keeps the run of a new event compact and reads it back as the whole run, whether enqueued at its receipt or later', () => {
    const state = new StoreState();
    state.apply({ t: 'event', at: T0, event: event(0) });
    state.apply({ t: 'event', at: T0 + 1000 + 250, event: event(1) });

    expect(isCompact(state, 'event:evt_0')).toBe(true);
    expect(isCompact(state, 'event:evt_1')).toBe(true);
    expect(state.getRun('event:evt_0')).toStrictEqual(wholeRun(0, T0));
    expect(state.getRun('event:evt_1')).toStrictEqual(wholeRun(1, T0 + 1250));
    expect(state.listEvents({}).map((e) => e.run)).toStrictEqual([wholeRun(1, T0 + 1250), wholeRun(0, T0)]);
  });

  it('lists, counts and summarises compact runs by kind, status and due time like whole ones', () => {
    const state = new StoreState();
    for (let i = 0; i < 3; i++) state.apply({ t: 'event', at: T0 + i * 1000, event: event(i) });
    state.apply({ t: 'enqueue', at: T0, run: { key: 'payment:pay_9:paid', kind: 'fulfillment', data: {} } });

    expect(state.listRuns({ kind: 'event' }).map((run) => run.key)).toEqual(['event:evt_0', 'event:evt_1', 'event:evt_2']);
    expect(state.listRuns({ newestFirst: true, limit: 2 }).map((run) => run.key)).toEqual(['payment:pay_9:paid', 'event:evt_2']);
    expect(state.listRuns({ offset: 1, limit: 1 })).toStrictEqual([wholeRun(1, T0 + 1000)]);
    expect(state.countRuns({ dueBy: iso(T0 + 1000) })).toBe(3); // evt_0, evt_1 and the fulfillment run
    expect(state.countRuns({ kind: 'event', status: 'pending' })).toBe(3);
    expect(state.countRuns({ kind: 'fulfillment' })).toBe(1);
    expect(state.countRuns({ status: 'done' })).toBe(0);
    const summary = state.summarize(T0 + 10_000);
    expect(summary.dispatch).toEqual({ pending: 3, running: 0, failed: 0, oldestQueuedAt: iso(T0) });
    expect(summary.fulfillment).toEqual({ pending: 1, running: 0, failed: 0 });
  });

  it('turns a compact run whole at its first claim, and a duplicate insert or enqueue leaves it as it is', () => {
    const state = new StoreState();
    state.apply({ t: 'event', at: T0, event: event(0) });
    expect(state.apply({ t: 'event', at: T0 + 5000, event: event(0, T0 + 5000) }).changed).toBe(false);
    expect(state.apply({ t: 'enqueue', at: T0 + 5000, run: { key: 'event:evt_0', kind: 'event', data: { other: true } } }).value).toEqual({ inserted: false, run: wholeRun(0, T0) });
    expect(isCompact(state, 'event:evt_0')).toBe(true);

    const claimed = state.apply({ t: 'claim', at: T0 + 6000, key: 'event:evt_0', owner: 'w', leaseMs: 1000 }).value;
    expect(claimed).toMatchObject({ status: 'running', attempts: 1, owner: 'w', createdAt: iso(T0), updatedAt: iso(T0 + 6000) });
    expect(isCompact(state, 'event:evt_0')).toBe(false);
    // Retried later, it is pending again but not fresh (one attempt made): it stays whole.
    state.apply({ t: 'fail', at: T0 + 6500, key: 'event:evt_0', owner: 'w', error: 'boom', retryAt: iso(T0 + 7000) });
    expect(state.getRun('event:evt_0')).toMatchObject({ status: 'pending', attempts: 1, lastError: 'boom' });
  });

  it('gives a run the enqueue time written as the state writes times, whatever the event received time looks like', () => {
    const state = new StoreState();
    // The same instant as T0, written another way: the run's times must still be iso(T0).
    state.apply({ t: 'event', at: T0, event: { ...event(0), receivedAt: '2026-01-01T00:00:00Z' } });
    state.apply({ t: 'event', at: T0 + 500, event: event(1, T0 + 500) });
    expect(state.getRun('event:evt_0')).toStrictEqual(wholeRun(0, T0));
    expect(state.summarize(T0 + 10_000).dispatch.oldestQueuedAt).toBe(iso(T0));
  });

  it('lists no run as due by a time that does not parse, compact or whole', () => {
    const state = new StoreState();
    state.apply({ t: 'event', at: T0, event: event(0) });
    state.apply({ t: 'enqueue', at: T0, run: { key: 'payment:pay_9:paid', kind: 'fulfillment', data: {} } });
    expect(state.listRuns({ dueBy: 'not a time' })).toEqual([]);
    expect(state.countRuns({ dueBy: 'not a time' })).toBe(0);
  });

  it('writes every run whole in a snapshot, and a state opened from it keeps the fresh ones compact again, losing nothing', () => {
    const state = new StoreState();
    for (let i = 0; i < 4; i++) state.apply({ t: 'event', at: T0 + i * 1000 + (i === 3 ? 7 : 0), event: event(i) });
    state.apply({ t: 'claim', at: T0 + 10_000, key: 'event:evt_1', owner: 'w', leaseMs: 1000 });
    state.apply({ t: 'complete', at: T0 + 10_500, key: 'event:evt_1', owner: 'w' });

    const snapshot = JSON.parse(JSON.stringify(state.snapshotData())) as StateData;
    expect(Object.values(snapshot.runs).every((run) => typeof run === 'object')).toBe(true);
    expect(snapshot.runs['event:evt_0']).toEqual(wholeRun(0, T0));

    const reopened = new StoreState(snapshot);
    expect(['event:evt_0', 'event:evt_2', 'event:evt_3'].map((key) => isCompact(reopened, key))).toEqual([true, true, true]);
    expect(isCompact(reopened, 'event:evt_1')).toBe(false);
    expect(JSON.parse(JSON.stringify(reopened.snapshotData()))).toStrictEqual(snapshot);
  });

  it('keeps whole a snapshot run that is not exactly an untouched dispatch run', () => {
    const state = new StoreState();
    state.apply({ t: 'event', at: T0, event: event(0) });
    state.apply({ t: 'event', at: T0, event: event(1, T0) });
    const snapshot = JSON.parse(JSON.stringify(state.snapshotData())) as StateData;
    // Data that says more than the event's id and type, and times that differ.
    snapshot.runs['event:evt_0'] = { ...snapshot.runs['event:evt_0']!, data: { eventId: 'evt_0', type: 'payment.paid', note: 'x' } };
    snapshot.runs['event:evt_1'] = { ...snapshot.runs['event:evt_1']!, nextAttemptAt: iso(T0 + 1) };

    const reopened = new StoreState(snapshot);
    expect(isCompact(reopened, 'event:evt_0')).toBe(false);
    expect(isCompact(reopened, 'event:evt_1')).toBe(false);
    expect(JSON.parse(JSON.stringify(reopened.snapshotData()))).toStrictEqual(snapshot);
  });
});

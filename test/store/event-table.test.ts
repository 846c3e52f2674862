import { afterEach, describe, expect, it } from 'vitest';
import { StoreState } from '../../src/store/state.js';
import type { StoredEvent } from '../../src/store/types.js';
import { sampleBody } from './fixtures/sample-event.js';
import { openEmbedded, Scratch } from './helpers.js';

// The state keeps its events in a table of columns (times as numbers where that loses nothing, ids
// as UTF-8 bytes, the body's place flat): every event must still read back exactly as it was stored.

const scratch = new Scratch();
afterEach(() => scratch.cleanUp());

const T0 = Date.parse('2026-01-01T00:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString();

/** Times that are not what `toISOString()` writes: they must come back as they were given. */
const ODD_TIMES = ['2026-01-01T00:00:05Z', '2026-01-01T00:00:06.123456+00:00', '2026-01-01T01:00:07.000+01:00'];

function event(id: string, receivedAt: string, createdAt = receivedAt): StoredEvent {
  return { id, type: 'payment.paid', environment: 'test', createdAt, receivedAt, resourceKind: 'payment', resourceId: `pay_${id}`, body: sampleBody(id) };
}

/** Canonical events at T0 + 1..4 s and 8 s, odd-timed ones at 5, 6 and 7 s. */
function events(): StoredEvent[] {
  return [
    ...[1, 2, 3, 4, 8].map((s) => event(`evt_${s}`, iso(T0 + s * 1000), ODD_TIMES[s % 3] as string)),
    ...ODD_TIMES.map((time, i) => event(`evt_${5 + i}`, time)),
  ];
}

describe('event table', () => {
  it('reads every event back as it was stored, odd times byte for byte, and orders and filters by the instant', () => {
    const state = new StoreState();
    for (const e of events()) state.apply({ t: 'event', at: Date.parse(e.receivedAt), event: e });

    for (const e of events()) expect(state.getEvent(e.id)).toStrictEqual({ ...e, bodyRef: undefined });
    expect(state.listEvents({}).map((e) => e.id)).toEqual(['evt_8', 'evt_7', 'evt_6', 'evt_5', 'evt_4', 'evt_3', 'evt_2', 'evt_1']);
    expect(state.listEvents({ since: iso(T0 + 5500) }).map((e) => e.id)).toEqual(['evt_8', 'evt_7', 'evt_6']);
    // An odd receive time makes a compact run due at that instant.
    expect(state.getRun('event:evt_5')).toMatchObject({ status: 'pending', createdAt: iso(T0 + 5000), nextAttemptAt: iso(T0 + 5000) });
    expect(state.countRuns({ dueBy: iso(T0 + 5500) })).toBe(5);
    expect(state.summarize(T0 + 3_600_000 + 4500).eventsByType).toEqual([{ type: 'payment.paid', lastHour: 4, lastDay: 8 }]);
    // Canonical times at the ends of what a Date holds, and before 1970, read back as they were.
    for (const time of ['1969-12-31T23:59:59.999Z', '-271821-04-20T00:00:00.000Z', '+275760-09-13T00:00:00.000Z']) {
      const edge = new StoreState();
      edge.apply({ t: 'event', at: T0, event: event('evt_edge', time, time) });
      expect(edge.getEvent('evt_edge')).toMatchObject({ createdAt: time, receivedAt: time });
    }
    // The snapshot holds records, not rows.
    expect(state.snapshotData().events.evt_6).toStrictEqual({ ...event('evt_6', ODD_TIMES[1] as string), bodyRef: undefined });
  });

  it('prunes payloads and forgets events by the instant they were received, odd times included', () => {
    const state = new StoreState();
    for (const e of events()) state.apply({ t: 'event', at: Date.parse(e.receivedAt), event: e });
    for (const e of events()) {
      state.apply({ t: 'claim', at: T0 + 10_000, key: `event:${e.id}`, owner: 'w', leaseMs: 60_000 });
      state.apply({ t: 'complete', at: T0 + 10_000, key: `event:${e.id}`, owner: 'w' });
    }
    state.apply({ t: 'prune', at: T0 + 20_000, payloadsBefore: iso(T0 + 6500), eventsBefore: iso(T0 + 2500) });

    expect(state.listEvents({}).map((e) => [e.id, e.body === undefined])).toEqual([
      ['evt_8', false],
      ['evt_7', false],
      ['evt_6', true],
      ['evt_5', true],
      ['evt_4', true],
      ['evt_3', true],
    ]);
    expect(state.getEvent('evt_6')).toStrictEqual({ ...event('evt_6', ODD_TIMES[1] as string), body: undefined, bodyRef: undefined });
  });

  it('embedded: a second instance and a restart read every event back exactly, from the journal and from a snapshot', async () => {
    const dir = await scratch.dir();
    const writer = await openEmbedded(dir);
    for (const e of events().slice(0, 4)) await writer.insertEvent(e);
    await writer.compact();
    for (const e of events().slice(4)) await writer.insertEvent(e);
    const reader = await openEmbedded(dir);
    for (const e of events()) expect(await reader.getEvent(e.id)).toStrictEqual(e);
    await Promise.all([writer.close(), reader.close()]);

    const reopened = await openEmbedded(dir);
    for (const e of events()) expect(await reopened.getEvent(e.id)).toStrictEqual(e);
    expect((await reopened.listEvents({ since: iso(T0 + 5500) })).map((e) => e.id)).toEqual(['evt_8', 'evt_7', 'evt_6']);
    await reopened.close();
  });

  it('reads back ids and resource ids UTF-8 cannot carry, and resource ids that are not text, exactly', () => {
    const state = new StoreState();
    const odd = [
      { ...event('evt_\ud83d', iso(T0)), resourceId: 'pay_\ude00' },
      { ...event('evt_\ufffd', iso(T0 + 1)), resourceId: 'pay_\ufffd' },
      { ...event('evt_😀', iso(T0 + 2)), resourceId: null as unknown as string },
      { ...event('evt_none', iso(T0 + 3)), resourceId: undefined },
    ];
    for (const e of odd) state.apply({ t: 'event', at: T0, event: e });
    for (const e of odd) expect(state.getEvent(e.id)).toStrictEqual({ ...e, bodyRef: undefined });
    // A lone surrogate and U+FFFD are one and the same in UTF-8, and must stay two events.
    expect(state.apply({ t: 'event', at: T0, event: odd[0] as StoredEvent }).changed).toBe(false);
    expect(state.listEvents({ resourceId: 'pay_\ude00' }).map((e) => e.id)).toEqual(['evt_\ud83d']);
    expect(state.listEvents({ resourceId: 'pay_\ufffd' }).map((e) => e.id)).toEqual(['evt_\ufffd']);
    expect(new StoreState(JSON.parse(JSON.stringify(state.snapshotData()))).listEvents({}).map((e) => e.id)).toEqual(['evt_none', 'evt_😀', 'evt_\ufffd', 'evt_\ud83d']);
  });

  it('renumbers its slots once forgotten events outnumber the kept ones, and answers as before', () => {
    const state = new StoreState();
    const n = 3000;
    for (let i = 0; i < n; i++) state.apply({ t: 'event', at: T0 + i, event: event(`evt_${i}`, iso(T0 + i)) });
    // Every third stays waiting; the others are done, and a prune forgets all done but the newest 100.
    for (let i = 0; i < n; i++) {
      if (i % 3 === 0) continue;
      state.apply({ t: 'claim', at: T0 + n, key: `event:evt_${i}`, owner: 'w', leaseMs: 60_000 });
      state.apply({ t: 'complete', at: T0 + n, key: `event:evt_${i}`, owner: 'w' });
    }
    state.apply({ t: 'enqueue', at: T0 + n, run: { key: 'payment:pay_1:paid', kind: 'fulfillment', data: {} } });
    const kept = (i: number) => i % 3 === 0 || i >= n - 100;
    state.apply({ t: 'prune', at: T0 + n + 1, eventsBefore: iso(T0 + n - 100) });

    expect(state.data.events.slotCount).toBe(state.data.events.size);
    expect(state.data.events.size).toBe([...Array(n).keys()].filter(kept).length);
    for (let i = 0; i < n; i += 7) expect(state.getEvent(`evt_${i}`)?.id).toBe(kept(i) ? `evt_${i}` : undefined);
    expect(state.listRuns({ kind: 'event', status: 'pending', limit: 3 }).map((run) => run.key)).toEqual(['event:evt_0', 'event:evt_3', 'event:evt_6']);
    expect(state.listRuns({ newestFirst: true, limit: 2 }).map((run) => run.key)).toEqual(['payment:pay_1:paid', `event:evt_${n - 1}`]);
    expect(state.countRuns({ status: 'pending' })).toBe(n / 3 + 1);
    // A forgotten id is new again.
    expect(state.apply({ t: 'event', at: T0 + n + 2, event: event('evt_1', iso(T0 + n + 2)) }).value).toEqual({ inserted: true });
    expect(state.listEvents({ limit: 1 }).map((e) => e.id)).toEqual(['evt_1']);
  });

  it('regression: takes an empty id and an empty resource id, after a chunk filled exactly, and answers for every event after (a throw once left a phantom event)', () => {
    const state = new StoreState();
    const chunk = 256 * 1024;
    state.apply({ t: 'event', at: T0, event: { ...event('a', iso(T0)), resourceId: 'r'.repeat(chunk - 1) } });
    state.apply({ t: 'event', at: T0, event: { ...event('b', iso(T0 + 1)), resourceId: '' } });
    state.apply({ t: 'event', at: T0, event: { ...event('', iso(T0 + 2)), resourceId: '' } });
    state.apply({ t: 'event', at: T0, event: event('z', iso(T0 + 3)) });
    expect(state.eventCount).toBe(4);
    expect(state.getEvent('b')).toMatchObject({ id: 'b', resourceId: '' });
    expect(state.getEvent('')).toMatchObject({ id: '', resourceId: '' });
    expect(state.listEvents({}).map((e) => [e.id, e.resourceId?.length])).toEqual([['z', 5], ['', 0], ['b', 0], ['a', chunk - 1]]);
    expect(Object.keys(state.snapshotData().events).sort()).toEqual(['', 'a', 'b', 'z']);
  });

  it('regression: a snapshot run stored under another key than its own key field is found, listed and counted by the key it is stored under', () => {
    const state = new StoreState();
    state.apply({ t: 'event', at: T0, event: event('evt_7', iso(T0)) });
    state.apply({ t: 'enqueue', at: T0, run: { key: 'payment:p:paid', kind: 'fulfillment', data: {} } });
    const snapshot = JSON.parse(JSON.stringify(state.snapshotData()));
    snapshot.runs['payment:p:PAID'] = { ...snapshot.runs['payment:p:paid'] };
    delete snapshot.runs['payment:p:paid'];
    snapshot.runs['event:evt_7'].key = 'event:evt_Z';

    const reopened = new StoreState(snapshot);
    expect(reopened.summarize(T0 + 1000).fulfillment).toEqual({ pending: 1, running: 0, failed: 0 });
    expect(reopened.listRuns({ kind: 'fulfillment', status: ['pending', 'running'], dueBy: iso(T0 + 1000) }).map((run) => run.key)).toEqual(['payment:p:PAID']);
    expect(reopened.getRun('event:evt_7')).toMatchObject({ key: 'event:evt_7' });
    expect(Object.keys(reopened.snapshotData().runs)).toEqual(['event:evt_7', 'payment:p:PAID']);
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import { StoreState } from '../../src/store/state.js';
import type { StoredEvent } from '../../src/store/types.js';
import { sampleBody } from './fixtures/sample-event.js';
import { openEmbedded, Scratch } from './helpers.js';

// The state keeps each event as a compact row (times as numbers where that loses nothing, the
// body's place flat): every event must still read back exactly as it was stored.

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

describe('event rows', () => {
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
});

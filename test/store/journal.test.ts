import { describe, expect, it } from 'vitest';
import { decodeJournal, encodeOp } from '../../src/store/embedded/journal.js';
import { StoreState, type EventRecord, type Op } from '../../src/store/state.js';
import type { StoredEvent } from '../../src/store/types.js';
import { sampleBody } from './fixtures/sample-event.js';

// A process applies the op `encodeOp` hands back; another process, or a restart, applies what its
// line decodes to. The two must be the same op, whatever the event holds, or the states part.

const AT = Date.parse('2026-01-01T00:00:00Z');

function event(fields: Partial<StoredEvent> = {}): StoredEvent {
  return {
    id: 'evt_1',
    type: 'payment.paid',
    environment: 'test',
    createdAt: '2026-01-01T00:00:00.000Z',
    receivedAt: '2026-01-01T00:00:01.000Z',
    resourceKind: 'payment',
    resourceId: 'pay_1',
    body: sampleBody('evt_1'),
    ...fields,
  };
}

/** The op a line decodes to when it is the whole of segment 3 after `offset` bytes of other lines. */
function decoded(line: string, offset: number): Op {
  const chunk = Buffer.concat([Buffer.alloc(offset, 0x20), Buffer.from(line)]);
  const { ops } = decodeJournal(chunk.subarray(offset), offset, 3);
  expect(ops).toHaveLength(1);
  return ops[0] as Op;
}

describe('journal lines', () => {
  const cases: Array<[string, StoredEvent]> = [
    ['an event as the receiver stores it', event()],
    ['fields left undefined', event({ environment: undefined, resourceKind: undefined, resourceId: undefined })],
    ['text JSON escapes (quotes, a lone surrogate, control characters, non-ASCII)', event({ id: 'evt_"q"\\\ud800\u0001é', resourceId: 'pay_\u2028€' })],
    ['a field that is not text (a Date, from a caller outside the types)', event({ createdAt: new Date(AT) as unknown as string })],
    ['a field the event type does not have', { ...event(), extra: { nested: [1, 2] } } as StoredEvent],
    ['a text field the event type does not have', { ...event(), note: 'kept in the line' } as StoredEvent],
  ];

  for (const [name, stored] of cases) {
    it(`applies what a replay of the line applies: ${name}`, () => {
      const encoded = encodeOp({ t: 'event', at: AT, event: stored }, 3, 4096);
      expect(encoded.bytes).toBe(Buffer.byteLength(encoded.line));
      const replayed = decoded(encoded.line, 4096);
      // Field for field (a key left out and a key holding undefined read the same)…
      expect(encoded.applied).toEqual(replayed);
      // …and so the same state, as it reads and as a snapshot writes it.
      const here = new StoreState();
      const there = new StoreState();
      here.apply(encoded.applied);
      there.apply(replayed);
      expect(here.snapshotData()).toStrictEqual(there.snapshotData());
      const id = (replayed as Extract<Op, { t: 'event' }>).event.id;
      expect(here.getEvent(id)).toStrictEqual(there.getEvent(id));
    });
  }

  it('points the applied event at its body in the line, not at a copy', () => {
    const stored = event();
    const encoded = encodeOp({ t: 'event', at: AT, event: stored }, 3, 4096);
    const applied = encoded.applied as Extract<Op, { t: 'event' }>;
    expect(applied.event.body).toBeUndefined();
    const ref = (applied.event as EventRecord).bodyRef!;
    expect(ref.seg).toBe(3);
    const bytes = Buffer.from(encoded.line).subarray(ref.off - 4096, ref.off - 4096 + ref.len);
    expect(JSON.parse(bytes.toString())).toBe(stored.body);
  });

  it('refuses an event a replay could not read back as written, before any line is made', () => {
    expect(() => encodeOp({ t: 'event', at: AT, event: event({ id: 42 as unknown as string }) }, 0, 0)).toThrow(/id must be text, got number/);
    expect(() => encodeOp({ t: 'event', at: AT, event: event({ body: null as unknown as string }) }, 0, 0)).toThrow(/body must be text .* got null/);
    expect(() => encodeOp({ t: 'event', at: AT, event: event({ body: Buffer.from('{}') as unknown as string }) }, 0, 0)).toThrow(/body must be text .* got object/);
    // A pruned event (no body) is still written.
    expect(encodeOp({ t: 'event', at: AT, event: event({ body: undefined }) }, 0, 0).line).toContain('"evt_1"');
  });

  it('turns a Date into the text a replay reads', () => {
    const encoded = encodeOp({ t: 'event', at: AT, event: event({ createdAt: new Date(AT) as unknown as string }) }, 0, 0);
    expect((encoded.applied as Extract<Op, { t: 'event' }>).event.createdAt).toBe('2026-01-01T00:00:00.000Z');
  });
});

import type { BodyRef, EventRecord } from './state.js';

/**
 * A time as an event row keeps it: two small integers (ms since epoch = `high` × 2^22 + `low`) when
 * the text is what `toISOString()` gives for them (as every time the toolkit writes is), else the
 * text as it came (in `high`), so it reads back the same byte for byte. Why two integers: V8 keeps
 * integers this small in the object itself, and reading one allocates nothing, where a whole ms
 * count (too large for that) is a double that every read boxes anew, and the overview reads the
 * receive time of every waiting event at each metrics scrape. The text cost a 40-byte string.
 */
const SPLIT = 2 ** 22;

interface PackedTime {
  high: number | string;
  low: number;
}

function packTime(text: string): PackedTime {
  const ms = Date.parse(text);
  if (!Number.isFinite(ms) || new Date(ms).toISOString() !== text) return { high: text, low: 0 };
  const high = Math.floor(ms / SPLIT);
  // `| 0` (exact: 0 ≤ low < 2^22): the subtraction of two doubles gives a double, and a row field
  // that once held one is a double field, each value a 16-byte box of its own (two per row).
  return { high, low: (ms - high * SPLIT) | 0 };
}

const timeMs = (high: number | string, low: number): number => (typeof high === 'number' ? high * SPLIT + low : Date.parse(high));
const unpackTime = (high: number | string, low: number): string => (typeof high === 'number' ? new Date(high * SPLIT + low).toISOString() : high);

/**
 * An event as the state keeps it: one fixed shape, its two times packed (`PackedTime`) and its body's place
 * (`BodyRef`) flat in the row (`seg` -1 without one). The state holds one per event ever received,
 * so these bytes are what a backlog and its history cost (see `Stores` in the README): ~60 fewer
 * per event than the `EventRecord` it reads back as (`recordOf`), which `StoreState` hands out.
 */
export interface EventRow {
  readonly id: string;
  readonly type: string;
  readonly environment: EventRecord['environment'];
  /** `createdAt` and `receivedAt`, packed (see `PackedTime`). */
  readonly createdAt: number | string;
  readonly createdLow: number;
  readonly receivedAt: number | string;
  readonly receivedLow: number;
  readonly resourceKind: EventRecord['resourceKind'];
  readonly resourceId: string | undefined;
  readonly body: string | undefined;
  readonly seg: number;
  readonly off: number;
  readonly len: number;
}

/**
 * The few distinct values of an event's `type`, `environment` and `resourceKind`, one string each:
 * every row holds them, and a parsed journal line or request gives each event its own copy.
 * Bounded, so that odd values cost their own copy rather than a growing table.
 */
const SHARED_VALUES = new Map<string, string>();
const SHARED_VALUES_MAX = 1024;
function shared<T extends string | undefined>(value: T): T {
  if (value === undefined) return value;
  const known = SHARED_VALUES.get(value);
  if (known !== undefined) return known as T;
  if (SHARED_VALUES.size < SHARED_VALUES_MAX) SHARED_VALUES.set(value, value);
  return value;
}

/** The row of `event`. */
export function eventRow(event: EventRecord): EventRow {
  const { body, bodyRef } = event;
  const created = packTime(event.createdAt);
  const received = packTime(event.receivedAt);
  return {
    id: event.id,
    type: shared(event.type),
    environment: shared(event.environment),
    createdAt: created.high,
    createdLow: created.low,
    receivedAt: received.high,
    receivedLow: received.low,
    resourceKind: shared(event.resourceKind),
    resourceId: event.resourceId,
    body,
    seg: bodyRef ? bodyRef.seg : -1,
    off: bodyRef ? bodyRef.off : 0,
    len: bodyRef ? bodyRef.len : 0,
  };
}

/** The same row without its body (its payload pruned). */
export function withoutBody(row: EventRow): EventRow {
  return { ...row, body: undefined, seg: -1, off: 0, len: 0 };
}

/** Where the row's body is kept outside the state, if it is. */
export const bodyRefOf = (row: EventRow): BodyRef | undefined => (row.seg < 0 ? undefined : { seg: row.seg, off: row.off, len: row.len });

/** The event a row holds, as `EventRecord` (a new object: callers may keep or change it). */
export function recordOf(row: EventRow): EventRecord {
  return {
    id: row.id,
    type: row.type,
    environment: row.environment,
    createdAt: unpackTime(row.createdAt, row.createdLow),
    receivedAt: unpackTime(row.receivedAt, row.receivedLow),
    resourceKind: row.resourceKind,
    resourceId: row.resourceId,
    body: row.body,
    bodyRef: bodyRefOf(row),
  };
}

/** `receivedAt` as text (what a compact dispatch run reads back its times as). */
export const receivedAtOf = (row: EventRow): string => unpackTime(row.receivedAt, row.receivedLow);

/** `receivedAt` in ms, for ordering and comparisons (an unparseable one sorts first). */
export function receivedMs(row: EventRow): number {
  const ms = timeMs(row.receivedAt, row.receivedLow);
  return Number.isNaN(ms) ? Number.NEGATIVE_INFINITY : ms;
}

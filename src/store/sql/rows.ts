import { StoreError } from '../../errors/index.js';
import type { Environment, Merchant } from '../../schemas/index.js';
import { isStorable } from './storable-text.js';
import type { CheckoutAttempt, NewsSource, Outcome, ResourceKind, Run, TenantMerchant } from '../types.js';

/** Rows as either database returns them (see `Database`), and their mapping to the store's records. */
type Time = Date | string;
type Bool = boolean | number;
type Json<T> = T | string;

/** A time as the store keeps it: one ISO format, which sorts as time does (SQLite compares text). */
export function iso(time: Time | number): string {
  const date = new Date(time);
  if (Number.isNaN(date.getTime())) throw new StoreError(`"${String(time)}" is not a time: give an ISO 8601 time such as 2030-01-01T00:00:00.000Z.`);
  return date.toISOString();
}

// A body with a character text cannot keep (see `storable-text.ts`) is kept as its JSON string
// literal instead, which has none and parses back to the same string: bodies stay byte for byte.
export function encodeBody(body: string): { text: string; escaped: boolean } {
  return isStorable(body) ? { text: body, escaped: false } : { text: JSON.stringify(body), escaped: true };
}

/** How a column's value reads into its field of the record (the whole row at hand, for a field of two columns). */
type Reader<In, Out> = (value: In, row: Record<string, unknown>) => Out;
type Readers = Record<string, Reader<never, unknown>>;
type Camel<S extends string> = S extends `${infer Head}_${infer Tail}` ? `${Head}${Capitalize<Camel<Tail>>}` : S;
/** A table's record: each column's field, camel-cased, but those read only with another column. */
type Fields<R extends Readers> = { [K in keyof R & string as [ReturnType<R[K]>] extends [never] ? never : Camel<K>]: ReturnType<R[K]> };

const plain = <T>(value: T) => value;
const text = plain<string>;
const int = (value: number) => Number(value);
const time = (value: Time) => iso(value);
const bool = (value: Bool) => value === true || value === 1;
const json = <T>(value: Json<T>) => (typeof value === 'string' ? (JSON.parse(value) as T) : value);
function optional<In, Out>(read: Reader<In, Out>): Reader<In | null, Out | undefined> {
  return (value, row) => (value === null || value === undefined ? undefined : read(value, row));
}
/** A body as `encodeBody` kept it. */
const body = (stored: string, row: Record<string, unknown>) => (bool(row.body_escaped as Bool) ? (JSON.parse(stored) as string) : stored);
/** `body_escaped`: read by `body`, not a field of its own. */
const readByBody = (_escaped: Bool): never => undefined as never;

/**
 * One table's columns, each with how it reads: its keys are the statements' column lists, its
 * readers the row's type and the record's, so that none of them can drift from another.
 */
function table<R extends Readers>(readers: R) {
  const columns = Object.keys(readers) as Array<keyof R & string>;
  const fields = columns
    .filter((column) => (readers[column] as unknown) !== readByBody)
    .map((column) => ({ column, field: column.replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase()), read: readers[column]! }));
  return {
    columns,
    read: (row: { [K in keyof R]: Parameters<R[K]>[0] }): Fields<R> => {
      const record: Record<string, unknown> = {};
      for (const { column, field, read } of fields) record[field] = read(row[column] as never, row);
      return record as Fields<R>;
    },
  };
}

/** A table's row, as `read` takes it. */
export type RowOf<T extends { read: (row: never) => unknown }> = Parameters<T['read']>[0];

export const EVENT = table({
  id: text,
  type: text,
  environment: optional(plain<Environment>),
  created_at: text,
  received_at: time,
  resource_kind: optional(plain<ResourceKind>),
  resource_id: optional(text),
  body: optional(body),
  body_escaped: readByBody,
});

export const RUN = table({
  key: text,
  kind: plain<Run['kind']>,
  status: plain<Run['status']>,
  attempts: int,
  outage_attempts: int,
  owner: optional(text),
  lease_until: optional(time),
  next_attempt_at: time,
  last_error: optional(text),
  data: json<Record<string, unknown>>,
  created_at: time,
  updated_at: time,
  completed_at: optional(time),
});
export type RunRow = RowOf<typeof RUN>;

export type PrefixedRunRow = { [K in keyof RunRow as `run_${K}`]: RunRow[K] | null };

/** The run of a row that carries one with its columns prefixed `run_` (an event with its dispatch run). */
export function toPrefixedRun(row: PrefixedRunRow): Run | undefined {
  if (row.run_key === null) return undefined;
  return RUN.read(Object.fromEntries(RUN.columns.map((column) => [column, row[`run_${column}`]])) as unknown as RunRow);
}

export const RESOURCE = table({
  kind: plain<ResourceKind>,
  id: text,
  environment: optional(plain<Environment>),
  order_id: optional(text),
  outcome: plain<Outcome>,
  outcome_source: optional(plain<NewsSource>),
  late: optional(bool),
  snapshot: optional(json<Record<string, unknown>>),
  expires_at: optional(text),
  last_news_at: time,
  open: bool,
  created_at: time,
  updated_at: time,
});

export const ATTEMPT = table({
  order_id: text,
  kind: plain<ResourceKind>,
  number: int,
  idempotency_key: text,
  request_hash: text,
  status: plain<CheckoutAttempt['status']>,
  resource_id: optional(text),
  checkout_url: optional(text),
  created_at: time,
  updated_at: time,
});

export const TENANT_MERCHANT = table({
  tenant_id: text,
  environment: plain<Environment>,
  number: int,
  idempotency_key: text,
  request_hash: text,
  status: plain<TenantMerchant['status']>,
  name: text,
  email: text,
  merchant_id: optional(text),
  snapshot: optional(json<Merchant>),
  created_at: time,
  updated_at: time,
});

export const TENANT_CREDENTIALS = table({ tenant_id: text, environment: plain<Environment>, sealed: text, key_id: text, updated_at: time });

export const DEAD_LETTER = table({
  id: text,
  received_at: time,
  reason: text,
  body,
  body_escaped: readByBody,
  headers: json<Record<string, string>>,
});

export const ACTIVITY = table({ subject: text, kind: text, at: time, data: json<Record<string, unknown>> });

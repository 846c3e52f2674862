import { StoreError } from '../../errors/index.js';
import type { Environment, Merchant } from '../../schemas/index.js';
import { isStorable } from './storable-text.js';
import type {
  CheckoutAttempt,
  SealedTenantCredentials,
  TenantMerchant,
  DeadLetter,
  NewsSource,
  Outcome,
  ResourceKind,
  ResourceRecord,
  Run,
  StoredEvent,
} from '../types.js';

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
const isoOrUndefined = (value: Time | null): string | undefined => (value === null ? undefined : iso(value));
const bool = (value: Bool): boolean => value === true || value === 1;
const json = <T>(value: Json<T>): T => (typeof value === 'string' ? (JSON.parse(value) as T) : value);

/**
 * A column whose values read as `T`. Each table's row is written once, as an object of these: its
 * keys are the column lists of the statements, its type the row they are read into, so the two
 * cannot drift apart. The values are never read.
 */
const column = <T>() => undefined as T;

/** The columns of a row, in the order written. */
const columnsOf = <Row extends object>(row: Row): ReadonlyArray<keyof Row & string> => Object.keys(row) as Array<keyof Row & string>;

// A body with a character text cannot keep (see `storable-text.ts`) is kept as its JSON string
// literal instead, which has none and parses back to the same string: bodies stay byte for byte.
export function encodeBody(body: string): { text: string; escaped: boolean } {
  return isStorable(body) ? { text: body, escaped: false } : { text: JSON.stringify(body), escaped: true };
}

function decodeBody(text: string, escaped: Bool): string {
  return bool(escaped) ? (JSON.parse(text) as string) : text;
}

const EVENT_ROW = {
  id: column<string>(),
  type: column<string>(),
  environment: column<Environment | null>(),
  created_at: column<string>(),
  received_at: column<Time>(),
  resource_kind: column<ResourceKind | null>(),
  resource_id: column<string | null>(),
  body: column<string | null>(),
  body_escaped: column<Bool>(),
};
export type EventRow = typeof EVENT_ROW;
export const EVENT_COLUMNS = columnsOf(EVENT_ROW);

export function toEvent(row: EventRow): StoredEvent {
  return {
    id: row.id,
    type: row.type,
    environment: row.environment ?? undefined,
    createdAt: row.created_at,
    receivedAt: iso(row.received_at),
    resourceKind: row.resource_kind ?? undefined,
    resourceId: row.resource_id ?? undefined,
    body: row.body === null ? undefined : decodeBody(row.body, row.body_escaped),
  };
}

const RUN_ROW = {
  key: column<string>(),
  kind: column<Run['kind']>(),
  status: column<Run['status']>(),
  attempts: column<number>(),
  owner: column<string | null>(),
  lease_until: column<Time | null>(),
  next_attempt_at: column<Time>(),
  last_error: column<string | null>(),
  data: column<Json<Record<string, unknown>>>(),
  created_at: column<Time>(),
  updated_at: column<Time>(),
  completed_at: column<Time | null>(),
};
export type RunRow = typeof RUN_ROW;
export const RUN_COLUMNS = columnsOf(RUN_ROW);

export function toRun(row: RunRow): Run {
  return {
    key: row.key,
    kind: row.kind,
    status: row.status,
    attempts: Number(row.attempts),
    owner: row.owner ?? undefined,
    leaseUntil: isoOrUndefined(row.lease_until),
    nextAttemptAt: iso(row.next_attempt_at),
    lastError: row.last_error ?? undefined,
    data: json(row.data),
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
    completedAt: isoOrUndefined(row.completed_at),
  };
}

export type PrefixedRunRow = { [K in keyof RunRow as `run_${K}`]: RunRow[K] | null };

/** The run of a row that carries one with its columns prefixed `run_` (an event with its dispatch run). */
export function toPrefixedRun(row: PrefixedRunRow): Run | undefined {
  if (row.run_key === null) return undefined;
  return toRun(Object.fromEntries(RUN_COLUMNS.map((column) => [column, row[`run_${column}`]])) as unknown as RunRow);
}

const RESOURCE_ROW = {
  kind: column<ResourceKind>(),
  id: column<string>(),
  environment: column<Environment | null>(),
  order_id: column<string | null>(),
  outcome: column<Outcome>(),
  outcome_source: column<NewsSource | null>(),
  late: column<Bool | null>(),
  snapshot: column<Json<Record<string, unknown>> | null>(),
  expires_at: column<string | null>(),
  last_news_at: column<Time>(),
  open: column<Bool>(),
  created_at: column<Time>(),
  updated_at: column<Time>(),
};
export type ResourceRow = typeof RESOURCE_ROW;
export const RESOURCE_COLUMNS = columnsOf(RESOURCE_ROW);

export function toResource(row: ResourceRow): ResourceRecord {
  return {
    kind: row.kind,
    id: row.id,
    environment: row.environment ?? undefined,
    orderId: row.order_id ?? undefined,
    outcome: row.outcome,
    outcomeSource: row.outcome_source ?? undefined,
    late: row.late === null ? undefined : bool(row.late),
    snapshot: row.snapshot === null ? undefined : json(row.snapshot),
    expiresAt: row.expires_at ?? undefined,
    lastNewsAt: iso(row.last_news_at),
    open: bool(row.open),
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

const ATTEMPT_ROW = {
  order_id: column<string>(),
  kind: column<ResourceKind>(),
  number: column<number>(),
  idempotency_key: column<string>(),
  request_hash: column<string>(),
  status: column<CheckoutAttempt['status']>(),
  resource_id: column<string | null>(),
  checkout_url: column<string | null>(),
  created_at: column<Time>(),
  updated_at: column<Time>(),
};
export type AttemptRow = typeof ATTEMPT_ROW;
export const ATTEMPT_COLUMNS = columnsOf(ATTEMPT_ROW);

export function toAttempt(row: AttemptRow): CheckoutAttempt {
  return {
    orderId: row.order_id,
    kind: row.kind,
    number: Number(row.number),
    idempotencyKey: row.idempotency_key,
    requestHash: row.request_hash,
    status: row.status,
    resourceId: row.resource_id ?? undefined,
    checkoutUrl: row.checkout_url ?? undefined,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

const TENANT_MERCHANT_ROW = {
  tenant_id: column<string>(),
  environment: column<Environment>(),
  number: column<number>(),
  idempotency_key: column<string>(),
  request_hash: column<string>(),
  status: column<TenantMerchant['status']>(),
  name: column<string>(),
  email: column<string>(),
  merchant_id: column<string | null>(),
  snapshot: column<Json<Merchant> | null>(),
  created_at: column<Time>(),
  updated_at: column<Time>(),
};
export type TenantMerchantRow = typeof TENANT_MERCHANT_ROW;
export const TENANT_MERCHANT_COLUMNS = columnsOf(TENANT_MERCHANT_ROW);

export function toTenantMerchant(row: TenantMerchantRow): TenantMerchant {
  return {
    tenantId: row.tenant_id,
    environment: row.environment,
    number: Number(row.number),
    idempotencyKey: row.idempotency_key,
    requestHash: row.request_hash,
    status: row.status,
    name: row.name,
    email: row.email,
    merchantId: row.merchant_id ?? undefined,
    snapshot: row.snapshot === null ? undefined : json(row.snapshot),
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}

const TENANT_CREDENTIALS_ROW = {
  tenant_id: column<string>(),
  environment: column<Environment>(),
  sealed: column<string>(),
  key_id: column<string>(),
  updated_at: column<Time>(),
};
export type TenantCredentialsRow = typeof TENANT_CREDENTIALS_ROW;
export const TENANT_CREDENTIALS_COLUMNS = columnsOf(TENANT_CREDENTIALS_ROW);

export function toTenantCredentials(row: TenantCredentialsRow): SealedTenantCredentials {
  return { tenantId: row.tenant_id, environment: row.environment, sealed: row.sealed, keyId: row.key_id, updatedAt: iso(row.updated_at) };
}

const DEAD_LETTER_ROW = {
  id: column<string>(),
  received_at: column<Time>(),
  reason: column<string>(),
  body: column<string>(),
  body_escaped: column<Bool>(),
  headers: column<Json<Record<string, string>>>(),
};
export type DeadLetterRow = typeof DEAD_LETTER_ROW;
export const DEAD_LETTER_COLUMNS = columnsOf(DEAD_LETTER_ROW);

export function toDeadLetter(row: DeadLetterRow): DeadLetter {
  return { id: row.id, receivedAt: iso(row.received_at), reason: row.reason, body: decodeBody(row.body, row.body_escaped), headers: json(row.headers) };
}

const ACTIVITY_ROW = {
  subject: column<string>(),
  kind: column<string>(),
  at: column<Time>(),
  data: column<Json<Record<string, unknown>>>(),
};
export type ActivityRow = typeof ACTIVITY_ROW;
export const ACTIVITY_COLUMNS = columnsOf(ACTIVITY_ROW);

export const toActivity = (row: ActivityRow) => ({ subject: row.subject, kind: row.kind, at: iso(row.at), data: json(row.data) });

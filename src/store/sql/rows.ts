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
 * The columns of a row type, in the order written: the compiler refuses one missing or unknown, so
 * the column lists of the statements and the rows they are read into cannot drift apart.
 */
function columnsOf<Row>(columns: { [K in keyof Row]: true }): ReadonlyArray<keyof Row & string> {
  return Object.keys(columns) as Array<keyof Row & string>;
}

// A body with a character text cannot keep (see `storable-text.ts`) is kept as its JSON string
// literal instead, which has none and parses back to the same string: bodies stay byte for byte.
export function encodeBody(body: string): { text: string; escaped: boolean } {
  return isStorable(body) ? { text: body, escaped: false } : { text: JSON.stringify(body), escaped: true };
}

function decodeBody(text: string, escaped: Bool): string {
  return bool(escaped) ? (JSON.parse(text) as string) : text;
}

export const EVENT_COLUMNS = columnsOf<EventRow>({
  id: true,
  type: true,
  environment: true,
  created_at: true,
  received_at: true,
  resource_kind: true,
  resource_id: true,
  body: true,
  body_escaped: true,
});

export interface EventRow {
  id: string;
  type: string;
  environment: Environment | null;
  created_at: string;
  received_at: Time;
  resource_kind: ResourceKind | null;
  resource_id: string | null;
  body: string | null;
  body_escaped: Bool;
}

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

export const RUN_COLUMNS = columnsOf<RunRow>({
  key: true,
  kind: true,
  status: true,
  attempts: true,
  owner: true,
  lease_until: true,
  next_attempt_at: true,
  last_error: true,
  data: true,
  created_at: true,
  updated_at: true,
  completed_at: true,
});

export interface RunRow {
  key: string;
  kind: Run['kind'];
  status: Run['status'];
  attempts: number;
  owner: string | null;
  lease_until: Time | null;
  next_attempt_at: Time;
  last_error: string | null;
  data: Json<Record<string, unknown>>;
  created_at: Time;
  updated_at: Time;
  completed_at: Time | null;
}

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

export const RESOURCE_COLUMNS = columnsOf<ResourceRow>({
  kind: true,
  id: true,
  environment: true,
  order_id: true,
  outcome: true,
  outcome_source: true,
  late: true,
  snapshot: true,
  expires_at: true,
  last_news_at: true,
  open: true,
  created_at: true,
  updated_at: true,
});

export interface ResourceRow {
  kind: ResourceKind;
  id: string;
  environment: Environment | null;
  order_id: string | null;
  outcome: Outcome;
  outcome_source: NewsSource | null;
  late: Bool | null;
  snapshot: Json<Record<string, unknown>> | null;
  expires_at: string | null;
  last_news_at: Time;
  open: Bool;
  created_at: Time;
  updated_at: Time;
}

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

export const ATTEMPT_COLUMNS = columnsOf<AttemptRow>({
  order_id: true,
  kind: true,
  number: true,
  idempotency_key: true,
  request_hash: true,
  status: true,
  resource_id: true,
  checkout_url: true,
  created_at: true,
  updated_at: true,
});

export interface AttemptRow {
  order_id: string;
  kind: ResourceKind;
  number: number;
  idempotency_key: string;
  request_hash: string;
  status: CheckoutAttempt['status'];
  resource_id: string | null;
  checkout_url: string | null;
  created_at: Time;
  updated_at: Time;
}

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

export const TENANT_MERCHANT_COLUMNS = columnsOf<TenantMerchantRow>({
  tenant_id: true,
  environment: true,
  number: true,
  idempotency_key: true,
  request_hash: true,
  status: true,
  name: true,
  email: true,
  merchant_id: true,
  snapshot: true,
  created_at: true,
  updated_at: true,
});

export const TENANT_CREDENTIALS_COLUMNS = columnsOf<TenantCredentialsRow>({ tenant_id: true, environment: true, sealed: true, key_id: true, updated_at: true });

export interface TenantCredentialsRow {
  tenant_id: string;
  environment: Environment;
  sealed: string;
  key_id: string;
  updated_at: Time;
}

export function toTenantCredentials(row: TenantCredentialsRow): SealedTenantCredentials {
  return { tenantId: row.tenant_id, environment: row.environment, sealed: row.sealed, keyId: row.key_id, updatedAt: iso(row.updated_at) };
}

export interface TenantMerchantRow {
  tenant_id: string;
  environment: Environment;
  number: number;
  idempotency_key: string;
  request_hash: string;
  status: TenantMerchant['status'];
  name: string;
  email: string;
  merchant_id: string | null;
  snapshot: Json<Merchant> | null;
  created_at: Time;
  updated_at: Time;
}

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

export const DEAD_LETTER_COLUMNS = columnsOf<DeadLetterRow>({ id: true, received_at: true, reason: true, body: true, body_escaped: true, headers: true });

export interface DeadLetterRow {
  id: string;
  received_at: Time;
  reason: string;
  body: string;
  body_escaped: Bool;
  headers: Json<Record<string, string>>;
}

export function toDeadLetter(row: DeadLetterRow): DeadLetter {
  return { id: row.id, receivedAt: iso(row.received_at), reason: row.reason, body: decodeBody(row.body, row.body_escaped), headers: json(row.headers) };
}

export const ACTIVITY_COLUMNS = columnsOf<ActivityRow>({ subject: true, kind: true, at: true, data: true });

export interface ActivityRow {
  subject: string;
  kind: string;
  at: Time;
  data: Json<Record<string, unknown>>;
}

export const toActivity = (row: ActivityRow) => ({ subject: row.subject, kind: row.kind, at: iso(row.at), data: json(row.data) });

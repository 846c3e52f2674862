import { orderIdempotencyKey, tenantMerchantKey } from '../../domain/idempotency.js';
import type { ResourceKind } from '../../domain/index.js';
import { InvalidRequestError, printable, StoreError, type StoreFailure } from '../../errors/index.js';
import type { Queryable, Statement } from './database.js';
import type { SqlStore } from './sql-store.js';
import { storableJson } from './storable-text.js';
import { tuples } from './statements.js';

type Row = Record<string, unknown>;

/**
 * A table of create-once tries (`attempts`): what else of a row `keyOf` reads, and the
 * Idempotency-Key checkout-kit gives the row's try `number` (see `orderIdempotencyKey` and `tenantMerchantKey`).
 */
interface Attempts {
  reads: readonly string[];
  keyOf: (row: Row, number: number) => string;
}

/**
 * The tables a copy moves, each with the columns that identify a row (a row already in the target
 * is never written again) and the column it is read in order of. Every column is copied as the
 * source has it, but `seq`, which the target numbers itself in the order the rows come. Locks are
 * not copied: they are leases of the processes running now. A test holds this list to the schema's tables.
 */
const TABLES = [
  { table: 'events', key: ['id'], order: 'seq' },
  { table: 'runs', key: ['key'], order: 'seq' },
  { table: 'resources', key: ['kind', 'id'], order: 'seq' },
  {
    table: 'checkout_attempts',
    key: ['order_id'],
    order: 'order_id',
    attempts: { reads: ['kind'], keyOf: (row: Row, number: number) => orderIdempotencyKey(row.kind as ResourceKind, String(row.order_id), number) },
  },
  {
    table: 'tenant_merchants',
    key: ['tenant_id', 'environment'],
    order: 'seq',
    attempts: { reads: [], keyOf: (row: Row, number: number) => tenantMerchantKey(String(row.tenant_id), number) },
  },
  { table: 'tenant_credentials', key: ['tenant_id', 'environment'], order: 'seq' },
  { table: 'dead_letters', key: ['id'], order: 'seq' },
  // Timeline entries have no identity of their own: those later than the target's latest are copied
  // (an entry in the same millisecond as that one, not copied yet, is missed).
  { table: 'activity', key: undefined, order: 'seq', after: 'at' },
] as const satisfies ReadonlyArray<{ table: string; key: readonly string[] | undefined; order: string; after?: string; attempts?: Attempts }>;

/** Tables a copy leaves alone: the processes' leases, and the schema's own record (the target has its own). */
export const NOT_COPIED = ['locks', 'schema_migrations'] as const;

export type CopiedTable = (typeof TABLES)[number]['table'];

export interface CopyReport {
  /**
   * `copied`: rows this copy wrote. `changed`: rows the target has that changed in the source since
   * they were copied (its `updated_at` is later): the target keeps them as they were.
   */
  tables: Array<{ table: CopiedTable; source: number; target: number; copied: number; changed: number }>;
  /** Every row of the source is in the target, as the source has it. */
  complete: boolean;
}

const PAGE = 500;

/** A value read from one database, as the other takes it: times and JSON as text (booleans as they are). */
function portable(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString();
  if (value !== null && typeof value === 'object') return storableJson(value);
  return value;
}

/** `(a, b) IN ((…), (…))` for `rows`' values of `key`, numbered from `$1`. */
function keysIn(key: readonly string[], rows: Array<Record<string, unknown>>): { text: string; values: unknown[] } {
  return { text: `(${key.join(', ')}) IN (${tuples(rows.length, key.length)})`, values: rows.flatMap((row) => key.map((column) => row[column])) };
}

/** A row's `key` values as one comparable string. */
const identityOf = (key: readonly string[], row: Record<string, unknown>) => JSON.stringify(key.map((column) => row[column]));

/**
 * How many of `rows` (a page of the source) the target has as they were before a later change in
 * the source: a copy made while `serve` still ran. Such a row is not overwritten, since the target
 * may be in use and its own state is the one to keep; the report says so instead.
 */
async function changedSince(target: Side, spec: (typeof TABLES)[number], rows: Array<Record<string, unknown>>): Promise<number> {
  if (spec.key === undefined || !('updated_at' in rows[0]!)) return 0;
  const where = keysIn(spec.key, rows);
  const { rows: held } = await target.database.query<Record<string, unknown>>({
    text: `SELECT ${spec.key.join(', ')}, updated_at FROM ${target.dialect.prefix}${spec.table} WHERE ${where.text}`,
    values: where.values,
  });
  const targetTimes = new Map(held.map((row) => [identityOf(spec.key, row), portable(row.updated_at) as string]));
  return rows.filter((row) => {
    const copiedAt = targetTimes.get(identityOf(spec.key, row));
    return copiedAt !== undefined && (portable(row.updated_at) as string) > copiedAt;
  }).length;
}

/**
 * The tables whose newest rows say whose store it is: every table of rows with an identity, read
 * newest first. Of attempts (`attempts`: a checkout per order, a merchant per tenant) the shop
 * names the key, and another shop may name the same one ("1001"): see `isSourcesAttempt`.
 */
const IDENTIFYING = TABLES.filter((spec) => spec.key !== undefined);
/** How many of the target's newest rows of each must be in the source. */
const SAMPLE = 20;
/** What tells one attempt from another of the same key. */
const ATTEMPT_COLUMNS = ['number', 'idempotency_key', 'request_hash', 'status', 'created_at'];

/**
 * Whether `held`, the target's attempt, is the source's attempt `inSource` of the same key as it was
 * when copied: the same number, key, request hash and start; or an earlier number the source has
 * since followed, with the key checkout-kit gives it, not `created`, and started no later. Anything
 * else is another shop's under the same id, or written there by hand.
 */
function isSourcesAttempt(attempts: Attempts, held: Row, inSource: Row): boolean {
  const number = Number(held.number);
  if (Number(inSource.number) === number) {
    return ['idempotency_key', 'request_hash', 'created_at'].every((column) => portable(inSource[column]) === portable(held[column]));
  }
  return (
    Number(inSource.number) > number &&
    held.idempotency_key === attempts.keyOf(held, number) &&
    held.status !== 'created' &&
    (portable(held.created_at) as string) <= (portable(inSource.created_at) as string)
  );
}

/**
 * A target that is not empty must be an earlier copy of this source, not written to since: the
 * newest rows of each of its tables are the source's (the oldest may have been pruned from the
 * source since). Else two shops' rows would mix, or a store in use would be copied into.
 */
async function refuseAnotherStore(source: SqlStore, target: SqlStore): Promise<void> {
  for (const spec of IDENTIFYING) {
    const attempts = 'attempts' in spec ? spec.attempts : undefined;
    const columns = [...spec.key, ...(attempts ? [...ATTEMPT_COLUMNS, ...attempts.reads] : [])].join(', ');
    const newest = spec.order === 'seq' ? 'seq' : 'created_at';
    const { rows } = await target.database.query<Row>({
      text: `SELECT ${columns} FROM ${target.dialect.prefix}${spec.table} ORDER BY ${newest} DESC LIMIT ${SAMPLE}`,
    });
    if (rows.length === 0) continue;
    const where = keysIn(spec.key, rows);
    const { rows: found } = await source.database.query<Row>({
      text: `SELECT ${columns} FROM ${source.dialect.prefix}${spec.table} WHERE ${where.text}`,
      values: where.values,
    });
    const known = new Map(found.map((row) => [identityOf(spec.key, row), row]));
    const isSources = (row: Row) => {
      const inSource = known.get(identityOf(spec.key, row));
      return inSource !== undefined && (attempts === undefined || isSourcesAttempt(attempts, row, inSource));
    };
    const foreign = rows.find((row) => !isSources(row));
    if (foreign) {
      throw new InvalidRequestError(
        `The target ${target.description} holds ${spec.table} the source does not (${printable(spec.key.map((column) => String(foreign[column])).join(' '))}${attempts ? `, try ${String(foreign.number)}` : ''}): it is another store, or one written to since it was copied. Nothing was copied: copy into an empty store.`,
      );
    }
  }
}

/** What the copy reads and writes of a store. */
interface Side {
  database: Queryable;
  dialect: SqlStore['dialect'];
  description: string;
}

/** What each way a store fails for a while (see `StoreFailure`) is, and what to do before the copy runs again. */
const STOPPED_BY: Record<StoreFailure, { what: (store: string) => string; then: string }> = {
  disk_full: { what: (store) => `the disk holding the ${store} is full`, then: 'free some space there, then ' },
  unreachable: { what: (store) => `the ${store} cannot be reached`, then: 'check that its server is up, then ' },
  busy: { what: (store) => `the ${store} is busy`, then: '' },
};

/**
 * `store` as the copy uses it once it has begun writing: a failure its database says is passing
 * (full, unreachable, busy) says that the copy stopped, that the pages written before stay in the
 * target, and that running it again completes it. The database's own message says nothing was
 * written, which is true of the one statement only.
 */
function side(store: SqlStore, role: 'source' | 'target'): Side {
  const stopped = (error: unknown): never => {
    if (!(error instanceof StoreError) || error.reason === undefined) throw error;
    const said = ((error.cause as Error | undefined)?.message ?? error.message).split('\n')[0];
    const { what, then } = STOPPED_BY[error.reason];
    throw new StoreError(
      `The copy stopped: ${what(`${role} ${store.description}`)} (${said}). What was copied so far stays in the target; ${then}run the copy again: it copies only what is missing.`,
      { cause: error, reason: error.reason },
    );
  };
  return {
    database: { query: <R>(statement: Statement) => store.database.query<R>(statement).catch(stopped) },
    dialect: store.dialect,
    description: store.description,
  };
}

/** The latest `column` of the target's `table` (as the source compares it), or null when it has none. */
async function latestIn(target: Side, table: string, column: string): Promise<unknown> {
  const { rows } = await target.database.query<{ latest: unknown }>({ text: `SELECT max(${column}) AS latest FROM ${target.dialect.prefix}${table}` });
  return portable(rows[0]?.latest ?? null);
}

async function count(store: Side, table: string): Promise<number> {
  const { rows } = await store.database.query<{ n: number | string }>({ text: `SELECT count(*) AS n FROM ${store.dialect.prefix}${table}` });
  return Number(rows[0]?.n ?? 0);
}

/**
 * Whether two PostgreSQL stores are one schema of one database, however their URLs spell the server
 * (`localhost` and `127.0.0.1`, a port left out). The source's connection names itself with a
 * token no other session has, and the target's server is asked whether it serves that session:
 * only the source's own server can. Any role sees other sessions' `application_name`.
 */
async function isSamePostgresStore(source: SqlStore, target: SqlStore): Promise<boolean> {
  if (source.dialect.name !== 'postgres' || target.dialect.name !== 'postgres' || source.dialect.prefix !== target.dialect.prefix) return false;
  const token = `checkout-kit store copy ${crypto.randomUUID()}`;
  return source.database.transaction(async (tx) => {
    await tx.query({ text: `SELECT set_config('application_name', $1, true)`, values: [token] });
    const { rows } = await target.database.query({
      text: `SELECT 1 FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()`,
      values: [token],
    });
    return rows.length > 0;
  });
}

/**
 * Copy every row of `source` into `target` (both open), table by table in pages, each page one
 * statement of the target. A row already in the target is left as it is, so a copy cut short is
 * run again to complete it; one that changed in the source since is counted as `changed`, and the
 * copy is not complete. Stop the processes writing to `source` first.
 */
export async function copyStore(sourceStore: SqlStore, targetStore: SqlStore): Promise<CopyReport> {
  if (await isSamePostgresStore(sourceStore, targetStore)) {
    throw new InvalidRequestError(
      `The target ${targetStore.description} is the source store itself, reached by another URL. Nothing was copied: give another store.`,
    );
  }
  await refuseAnotherStore(sourceStore, targetStore);
  const source = side(sourceStore, 'source');
  const target = side(targetStore, 'target');
  const tables: CopyReport['tables'] = [];
  for (const spec of TABLES) {
    const latest = 'after' in spec ? { column: spec.after, value: await latestIn(target, spec.table, spec.after) } : undefined;
    let copied = 0;
    let changed = 0;
    let after: unknown = null;
    for (;;) {
      const bounds = [...(after === null ? [] : [{ column: spec.order, value: after }]), ...(latest?.value == null ? [] : [latest])];
      const { rows } = await source.database.query<Record<string, unknown>>({
        text: `SELECT * FROM ${source.dialect.prefix}${spec.table}
          ${bounds.length === 0 ? '' : `WHERE ${bounds.map((bound, i) => `${bound.column} > $${i + 2}`).join(' AND ')}`} ORDER BY ${spec.order} LIMIT $1`,
        values: [PAGE, ...bounds.map((bound) => bound.value)],
      });
      if (rows.length === 0) break;
      after = rows.at(-1)![spec.order];
      const columns = Object.keys(rows[0]!).filter((column) => column !== 'seq');
      const values = rows.flatMap((row) => columns.map((column) => portable(row[column])));
      // In an INSERT's VALUES each parameter takes its column's type: no casts needed.
      const conflict = spec.key === undefined ? '' : ` ON CONFLICT (${spec.key.join(', ')}) DO NOTHING`;
      const inserted = await target.database.query({
        text: `INSERT INTO ${target.dialect.prefix}${spec.table} (${columns.join(', ')}) VALUES ${tuples(rows.length, columns.length)}${conflict}`,
        values,
      });
      copied += inserted.rowCount;
      if (inserted.rowCount < rows.length) changed += await changedSince(target, spec, rows);
      if (rows.length < PAGE) break;
    }
    tables.push({ table: spec.table, source: await count(source, spec.table), target: await count(target, spec.table), copied, changed });
  }
  return { tables, complete: tables.every((table) => table.target >= table.source && table.changed === 0) };
}

import { InvalidRequestError } from '../../errors/index.js';
import type { SqlStore } from './sql-store.js';

/**
 * The tables a copy moves, each with the columns that identify a row (a row is never copied twice:
 * see `onConflict`) and the column it is read in order of. Every column is copied as the source has it, but
 * `seq`, which the target numbers itself in the order the rows come. Locks are not copied: they are
 * leases of the processes running now. A test holds this list to the schema's tables.
 */
const TABLES = [
  { table: 'events', key: ['id'], order: 'seq' },
  { table: 'runs', key: ['key'], order: 'seq' },
  { table: 'resources', key: ['kind', 'id'], order: 'seq' },
  { table: 'checkout_attempts', key: ['order_id'], order: 'order_id' },
  { table: 'tenant_merchants', key: ['tenant_id', 'environment'], order: 'seq' },
  { table: 'tenant_credentials', key: ['tenant_id', 'environment'], order: 'seq' },
  { table: 'dead_letters', key: ['id'], order: 'seq' },
  // Timeline entries have no identity of their own: those later than the target's latest are copied
  // (an entry in the same millisecond as that one, not copied yet, is missed).
  { table: 'activity', key: undefined, order: 'seq', after: 'at' },
] as const satisfies ReadonlyArray<{ table: string; key: readonly string[] | undefined; order: string; after?: string }>;

/** Tables a copy leaves alone: the processes' leases, and the schema's own record (the target has its own). */
export const NOT_COPIED = ['locks', 'schema_migrations'] as const;

export type CopiedTable = (typeof TABLES)[number]['table'];

export interface CopyReport {
  /** `copied`: rows written by this copy, new in the target or brought up to date there. */
  tables: Array<{ table: CopiedTable; source: number; target: number; copied: number }>;
  /** Every row of the source is in the target. */
  complete: boolean;
}

const PAGE = 500;

/** A value read from one database, as the other takes it: times and JSON as text (booleans as they are). */
function portable(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString();
  if (value !== null && typeof value === 'object') return JSON.stringify(value);
  return value;
}

/**
 * A row already in the target stays, unless the source's changed since it was copied (a run
 * completed, an outcome moved on): a row that carries `updated_at` is brought up to date where the
 * source's is newer, never where the target's is (a target already in use keeps what it wrote).
 */
function onConflict(key: readonly string[] | undefined, columns: string[]): string {
  if (key === undefined) return '';
  if (!columns.includes('updated_at')) return ` ON CONFLICT (${key.join(', ')}) DO NOTHING`;
  const set = columns.filter((column) => !key.includes(column)).map((column) => `${column} = excluded.${column}`);
  return ` ON CONFLICT (${key.join(', ')}) DO UPDATE SET ${set.join(', ')} WHERE t.updated_at < excluded.updated_at`;
}

/** The tables whose first rows say whose store it is: rows of the shop, in the order they were copied. */
const IDENTIFYING = TABLES.filter((spec) => spec.order === 'seq' && ['events', 'resources', 'tenant_merchants'].includes(spec.table));
/** How many of the target's first rows of each must be in the source. */
const SAMPLE = 20;

/**
 * A target that is not empty must be an earlier copy of this source (its first rows are the
 * source's), or two shops' rows would mix and an upsert would overwrite the other's.
 */
async function refuseAnotherStore(source: SqlStore, target: SqlStore): Promise<void> {
  for (const spec of IDENTIFYING) {
    const key = spec.key!.join(', ');
    const { rows } = await target.database.query<Record<string, unknown>>({
      text: `SELECT ${key} FROM ${target.dialect.prefix}${spec.table} ORDER BY seq LIMIT ${SAMPLE}`,
    });
    for (const row of rows) {
      const values = spec.key!.map((column) => row[column]);
      const found = await source.database.query({
        text: `SELECT 1 FROM ${source.dialect.prefix}${spec.table} WHERE ${spec.key!.map((column, i) => `${column} = $${i + 1}`).join(' AND ')}`,
        values,
      });
      if (found.rows.length === 0) {
        throw new InvalidRequestError(
          `The target ${target.description} holds ${spec.table} the source does not (${values.join(' ')}): it is another store, not a copy of this one. Nothing was copied: copy into an empty store, or into one copied from this source.`,
        );
      }
    }
  }
}

/** The latest `column` of the target's `table` (as the source compares it), or null when it has none. */
async function latestIn(target: SqlStore, table: string, column: string): Promise<unknown> {
  const { rows } = await target.database.query<{ latest: unknown }>({ text: `SELECT max(${column}) AS latest FROM ${target.dialect.prefix}${table}` });
  return portable(rows[0]?.latest ?? null);
}

async function count(store: SqlStore, table: string): Promise<number> {
  const { rows } = await store.database.query<{ n: number | string }>({ text: `SELECT count(*) AS n FROM ${store.dialect.prefix}${table}` });
  return Number(rows[0]?.n ?? 0);
}

/**
 * Copy every row of `source` into `target` (both open), table by table in pages, each page one
 * statement of the target. A row already in the target is kept, or brought up to date when the
 * source's is newer (`onConflict`), so a copy cut short, or made while the source was still in use,
 * is run again to complete it. Stop the processes writing to `source` first.
 */
export async function copyStore(source: SqlStore, target: SqlStore): Promise<CopyReport> {
  await refuseAnotherStore(source, target);
  const tables: CopyReport['tables'] = [];
  for (const spec of TABLES) {
    const latest = 'after' in spec ? { column: spec.after, value: await latestIn(target, spec.table, spec.after) } : undefined;
    let copied = 0;
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
      const tuples = rows.map((_, r) => `(${columns.map((_, c) => `$${r * columns.length + c + 1}`).join(', ')})`);
      const inserted = await target.database.query({
        text: `INSERT INTO ${target.dialect.prefix}${spec.table} AS t (${columns.join(', ')}) VALUES ${tuples.join(', ')}${onConflict(spec.key, columns)}`,
        values,
      });
      copied += inserted.rowCount;
      if (rows.length < PAGE) break;
    }
    tables.push({ table: spec.table, source: await count(source, spec.table), target: await count(target, spec.table), copied });
  }
  return { tables, complete: tables.every((table) => table.target >= table.source) };
}

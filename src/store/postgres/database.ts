import type { Pool, PoolClient } from 'pg';

/**
 * One SQL statement. A `name` makes it a prepared statement on each connection (parsed and planned
 * once per connection instead of once per call); the same name must always carry the same text.
 */
export interface Statement {
  name?: string | undefined;
  text: string;
  values?: unknown[];
}

export interface QueryResult<R> {
  rows: R[];
  /** Rows inserted, updated, deleted or returned. */
  rowCount: number;
}

/** Where statements run: a pool, one connection in a transaction, or an in-process database. */
export interface Queryable {
  query<R = Record<string, unknown>>(statement: Statement): Promise<QueryResult<R>>;
}

/**
 * The seam between `PostgresStore` and a PostgreSQL connection. `poolDatabase` fits a `pg.Pool`;
 * the tests fit PGlite (PostgreSQL compiled to WebAssembly) to it, so the same SQL runs in both.
 * Rows must come back with `timestamptz` as `Date` and `jsonb` parsed, as both drivers do.
 */
export interface Database extends Queryable {
  /** Human description without credentials, e.g. `PostgreSQL db.internal:5432/shop`. */
  readonly description: string;
  /** Run `work` on one connection between BEGIN and COMMIT (ROLLBACK when it throws). */
  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T>;
  /** Release what the database holds (the pool's connections). */
  close(): Promise<void>;
  /** Open up to `connections` connections now, so that the first queries do not wait for them (pools only). */
  warm?(connections: number): Promise<void>;
}

async function queryOn<R>(client: Pool | PoolClient, statement: Statement): Promise<QueryResult<R>> {
  const result = await client.query({ name: statement.name, text: statement.text, values: statement.values ?? [] });
  return { rows: result.rows as R[], rowCount: result.rowCount ?? 0 };
}

/**
 * A `Database` over a `pg.Pool`. `ownsPool`: whether `close()` ends the pool (false when the
 * application passed in a pool it shares with other code).
 */
export function poolDatabase(pool: Pool, description: string, ownsPool: boolean): Database {
  return {
    description,
    query: (statement) => queryOn(pool, statement),
    async transaction(work) {
      const client = await pool.connect();
      let broken: Error | undefined;
      try {
        await client.query('BEGIN');
        const tx: Queryable = { query: (statement) => queryOn(client, statement) };
        const result = await work(tx);
        await client.query('COMMIT');
        return result;
      } catch (error) {
        try {
          await client.query('ROLLBACK');
        } catch (rollbackError) {
          // The connection itself is gone: do not hand it to the next caller.
          broken = rollbackError as Error;
        }
        throw error;
      } finally {
        client.release(broken);
      }
    },
    async close() {
      if (ownsPool && !pool.ending) await pool.end();
    },
    async warm(connections) {
      // Checked out together, so the pool must open that many; released at once, they stay idle in
      // it. Every one that connected is released even when another failed: a client never
      // released would keep pool.end() (and so the process) waiting forever.
      const settled = await Promise.allSettled(Array.from({ length: Math.min(connections, pool.options.max ?? 10) }, () => pool.connect()));
      for (const outcome of settled) if (outcome.status === 'fulfilled') outcome.value.release();
      const failed = settled.find((outcome) => outcome.status === 'rejected');
      if (failed) throw failed.reason;
    },
  };
}

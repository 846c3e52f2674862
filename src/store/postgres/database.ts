import type { Pool, PoolClient } from 'pg';
import { StoreError } from '../../errors/index.js';
import type { Database, Queryable, QueryResult, Statement } from '../sql/database.js';

/** PostgreSQL's `disk_full`: no room to write. */
const DISK_FULL = '53100';
/** What a statement that could not wait its turn fails with (a lock held elsewhere past the statement timeout, a deadlock): try again. */
const BUSY = new Set(['40001', '40P01', '55P03', '57014']);

/** What a connection the server ended or refused fails with: SQLSTATE class 08, a shutdown, too many connections, or the socket's own error. */
const UNREACHABLE = new Set(['57P01', '57P02', '57P03', '53300', 'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE']);
/** pg's own words for a connection lost or never made (its errors carry no code). */
const CONNECTION_LOST = /Connection terminated|timeout exceeded when trying to connect|is not queryable/;

/** A failure of the server or the connection to it, as a `StoreError` (what a caller of any store catches). */
export class DatabaseFailure extends StoreError {}

function failure(error: unknown, description: string): StoreError {
  if (error instanceof StoreError) return error;
  const code = (error as { code?: unknown }).code;
  const message = (error as Error).message;
  if (code === DISK_FULL)
    return new StoreError(`The disk holding the store ${description} is full (${message}): nothing was written. Free some space.`, {
      cause: error,
      reason: 'disk_full',
    });
  if (typeof code === 'string' && BUSY.has(code))
    return new DatabaseFailure(`The store ${description} is busy (${message}): nothing was written; try again.`, { cause: error, reason: 'busy' });
  if ((typeof code === 'string' && (code.startsWith('08') || UNREACHABLE.has(code))) || CONNECTION_LOST.test(message))
    return new DatabaseFailure(`The store ${description} cannot be reached (${message}): nothing was written; check that the server is up.`, {
      cause: error,
      reason: 'unreachable',
    });
  return new DatabaseFailure(`The store ${description} failed: ${message}.`, { cause: error });
}

async function queryOn<R>(client: Pool | PoolClient, statement: Statement, description: string): Promise<QueryResult<R>> {
  try {
    const result = await client.query({ name: statement.name, text: statement.text, values: statement.values ?? [] });
    return { rows: result.rows as R[], rowCount: result.rowCount ?? 0 };
  } catch (error) {
    throw failure(error, description);
  }
}

/**
 * A `Database` over a `pg.Pool`. `ownsPool`: whether `close()` ends the pool (false when the
 * application passed in a pool it shares with other code).
 */
export function poolDatabase(pool: Pool, description: string, ownsPool: boolean): Database {
  return {
    description,
    query: (statement) => queryOn(pool, statement, description),
    async transaction(work) {
      const client = await pool.connect().catch((error: unknown) => {
        throw failure(error, description);
      });
      let broken: Error | undefined;
      try {
        await queryOn(client, { text: 'BEGIN' }, description);
        const tx: Queryable = { query: (statement) => queryOn(client, statement, description) };
        const result = await work(tx);
        await queryOn(client, { text: 'COMMIT' }, description);
        return result;
      } catch (error) {
        // A connection that cannot even roll back is gone: do not hand it to the next caller.
        await client.query('ROLLBACK').catch((rollbackError: Error) => (broken = rollbackError));
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
      if (failed) throw failure(failed.reason, description);
    },
  };
}

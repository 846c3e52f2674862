import type { PGlite, Transaction } from '@electric-sql/pglite';
import type { Database, Queryable, Statement } from '../../../src/store/postgres/index.js';

/**
 * PGlite (PostgreSQL compiled to WebAssembly, in this process) as a `Database`, so the store's SQL
 * runs unchanged where no server is available. PGlite has one session: its queries and
 * transactions are serialised, which keeps every concurrency promise trivially, and is why the
 * multi-process tests need a real server. Statement names are ignored (PGlite prepares anyway).
 * `close()` leaves the instance open: one PGlite serves a whole test file.
 */
export function pgliteDatabase(db: PGlite): Database {
  const queryOn = async <R>(target: PGlite | Transaction, statement: Statement) => {
    const result = await target.query<R>(statement.text, statement.values ?? []);
    return { rows: result.rows, rowCount: result.rowCount ?? result.affectedRows ?? result.rows.length };
  };
  return {
    description: 'PGlite (in-process)',
    query: (statement) => queryOn(db, statement),
    transaction: (work) => db.transaction((tx) => work({ query: (statement) => queryOn(tx, statement) } satisfies Queryable)),
    close: async () => {},
  };
}

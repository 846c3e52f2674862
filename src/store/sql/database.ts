/**
 * One SQL statement with `$1`-style parameters (both databases read them). A `name` makes it a
 * prepared statement on each PostgreSQL connection; the same name must always carry the same text.
 */
export interface Statement {
  name?: string | undefined;
  text: string;
  values?: unknown[];
}

/** A statement's rows and how many it touched. */
export interface QueryResult<R> {
  rows: R[];
  /** Rows returned, or else rows inserted, updated or deleted. */
  rowCount: number;
}

/** Where statements run: the database, or one transaction of it. */
export interface Queryable {
  /** Run one statement. */
  query<R = Record<string, unknown>>(statement: Statement): Promise<QueryResult<R>>;
}

/**
 * The seam between the SQL store and a database: a PostgreSQL pool (`poolDatabase`), SQLite
 * (`sqliteDatabase`), or PGlite in the tests. Each statement is its own transaction unless run
 * in `transaction`. Rows may come back with times as `Date` or ISO text, JSON parsed or as text,
 * booleans as booleans or 0/1: `rows.ts` reads all of them.
 */
export interface Database extends Queryable {
  /** Human description without credentials, e.g. `PostgreSQL db.internal:5432/shop`. */
  readonly description: string;
  /** Run `work` in one transaction (rolled back when it throws). `work` awaits only `tx`. */
  transaction<T>(work: (tx: Queryable) => Promise<T>): Promise<T>;
  /** Release what the database holds (connections, file handles). */
  close(): Promise<void>;
  /** Open up to `connections` connections now, so that the first queries do not wait for them (pools only). */
  warm?(connections: number): Promise<void>;
}

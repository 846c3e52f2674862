import type { Database, Queryable, Statement } from './database.js';

// PostgreSQL's text holds no NUL and its jsonb neither NUL nor a lone UTF-16 surrogate; SQLite's
// drivers turn a lone surrogate in text into U+FFFD. So that every store keeps the same text (and
// none refuses a write the other takes), each such character is stored as U+FFFD. Event and dead
// letter bodies stay exact: `encodeBody` (rows.ts) escapes them first.

// ES2024's well-formedness test (every supported Node has it): a fraction of the cost of a Unicode
// regular expression, which matters on the hot path, since every bound string is tested.
interface WellFormed {
  isWellFormed(): boolean;
  toWellFormed(): string;
}

/** Whether text holds no NUL and no lone surrogate. */
export const isStorable = (text: string): boolean => (text as unknown as WellFormed).isWellFormed() && !text.includes('\u0000');

/** `text` with every NUL and lone surrogate replaced by U+FFFD. */
export function storableText(text: string): string {
  return isStorable(text) ? text : (text as unknown as WellFormed).toWellFormed().replaceAll('\u0000', '\ufffd');
}

/** `JSON.stringify(value)` with every string and key made storable (see `storableText`). */
export function storableJson(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) => {
    if (typeof item === 'string') return storableText(item);
    if (item === null || typeof item !== 'object' || Array.isArray(item) || Object.keys(item).every(isStorable)) return item;
    return Object.fromEntries(Object.entries(item).map(([key, nested]) => [storableText(key), nested]));
  });
}

function storableStatement(statement: Statement): Statement {
  const { values } = statement;
  if (!values?.some((value) => typeof value === 'string' && !isStorable(value))) return statement;
  return { ...statement, values: values.map((value) => (typeof value === 'string' ? storableText(value) : value)) };
}

/** `database`, binding every string parameter made storable: what is written and what is looked up alike. */
export function storableDatabase(database: Database): Database {
  const storable = (queryable: Queryable): Queryable => ({ query: <R>(statement: Statement) => queryable.query<R>(storableStatement(statement)) });
  return {
    description: database.description,
    query: <R>(statement: Statement) => database.query<R>(storableStatement(statement)),
    transaction: (work) => database.transaction((tx) => work(storable(tx))),
    close: () => database.close(),
    ...(database.warm && { warm: (connections: number) => database.warm!(connections) }),
  };
}

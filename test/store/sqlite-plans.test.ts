import { expect, it } from 'vitest';
import { createRunLoop } from '../../src/runs/index.js';
import type { Statement } from '../../src/store/sql/database.js';
import { sqliteDialect } from '../../src/store/sql/dialect.js';
import { SqlStore } from '../../src/store/sql/sql-store.js';
import { sqliteDatabase } from '../../src/store/sqlite/sqlite-database.js';
import { captureLogger } from '../webhooks/helpers.js';

/** A SQLite store whose statements are recorded, and how SQLite plans any of them. */
function recordedStore() {
  const database = sqliteDatabase({ path: ':memory:' });
  const statements: Statement[] = [];
  const query = database.query.bind(database);
  database.query = (statement) => (statements.push(statement), query(statement));
  const store = new SqlStore({ database, dialect: sqliteDialect, schema: ':memory:' });
  const plan = async (statement: Statement) => {
    const { rows } = await query<{ detail: string }>({ text: `EXPLAIN QUERY PLAN ${statement.text}`, values: statement.values });
    return rows.map((row) => row.detail);
  };
  return { store, statements, plan };
}

it("reads the run loop's queue through the active runs' index, whatever history the runs table holds", async () => {
  const { store, statements, plan } = recordedStore();
  await store.open();
  const now = new Date('2031-01-01T00:00:00.000Z');
  const loop = createRunLoop({ store, concurrency: 4, clock: () => now, logger: captureLogger(), tasks: { event: async () => 'done', fulfillment: async () => 'done' } });
  statements.length = 0;
  await loop.kick();
  const reads = statements.filter((statement) => /FROM \S*runs\b/.test(statement.text));
  expect(reads).toHaveLength(1);
  const detail = await plan(reads[0]!);
  // A scan of the table is a read of every run ever made, on every wake-up of the loop.
  expect(detail.join('\n')).toMatch(/USING INDEX runs_active_idx/);
  expect(detail.filter((line) => /^SCAN runs\b/.test(line))).toEqual([]);
  await store.close();
});

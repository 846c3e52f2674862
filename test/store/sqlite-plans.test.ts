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
  const loop = createRunLoop({
    store,
    concurrency: 4,
    clock: () => now,
    logger: captureLogger(),
    tasks: { event: async () => 'done', fulfillment: async () => 'done' },
  });
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

it("serves the operator's search and list filters from indexes: no walk of every payment, no sort of all of them", async () => {
  const { store, statements, plan } = recordedStore();
  await store.open();
  const searches: Array<Parameters<SqlStore['searchResources']>[0]> = [
    { kind: 'payment' },
    { kind: 'payment', find: 'A-1001' },
    { kind: 'payment', handler: 'failed' },
    { kind: 'payment', handler: 'running' },
    { kind: 'payment', amountMin: '500', amountMax: '501', outcome: 'paid' },
    { kind: 'payment', since: '2031-01-01T00:00:00.000Z', before: '2031-01-02T00:00:00.000Z' },
  ];
  for (const search of searches) {
    statements.length = 0;
    await store.searchResources({ ...search, limit: 26 });
    const detail = (await plan(statements[0]!)).join('\n');
    if (Object.keys(search).length === 1) {
      // The plain list walks the table newest first and stops after one page: no sort of every payment.
      expect(detail).toMatch(/^SCAN res$/m);
      expect(detail).not.toMatch(/TEMP B-TREE/);
    } else {
      // Filtered or searched: only the rows an index names are read (a scan is every payment ever stored).
      expect(detail, JSON.stringify(search)).not.toMatch(/^SCAN (res|r2|resources)\b/m);
    }
  }
  await store.close();
});

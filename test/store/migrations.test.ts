import { afterAll, describe, expect, it } from 'vitest';
import { postgresDialect, sqliteDialect, type Dialect } from '../../src/store/sql/dialect.js';
import { migrationsTable } from '../../src/store/sql/migrate.js';
import { LATEST_VERSION, MIGRATIONS } from '../../src/store/sql/migrations.js';
import { sqliteDatabase } from '../../src/store/sqlite/sqlite-database.js';
import { SqliteStore, type Store } from '../../src/store/index.js';
import { STORE_FILE } from '../../src/store/sqlite/sqlite-store.js';
import { runCli } from '../support/cli.js';
import { tempDir } from '../support/temp-dirs.js';
import { randomSchema, TestDatabases } from './postgres/test-database.js';

const databases = new TestDatabases();
afterAll(() => databases.dispose());

/** The statements that leave a new database at schema version 1, holding two payments as that version wrote them. */
function atVersionOne(dialect: Dialect): string[] {
  const p = dialect.prefix;
  const payment = (seq: number, id: string, snapshot: string) =>
    `INSERT INTO ${p}resources (kind, id, order_id, outcome, outcome_rank, snapshot, last_news_at, open, created_at, updated_at)
     VALUES ('payment', '${id}', 'A-${seq}', 'paid', 2, '${snapshot}', '2030-01-01T00:00:0${seq}.000Z', ${dialect.name === 'sqlite' ? 1 : 'true'}, '2030-01-01T00:00:0${seq}.000Z', '2030-01-01T00:00:0${seq}.000Z')`;
  return [
    ...dialect.migrationPrelude(),
    migrationsTable(dialect),
    ...MIGRATIONS[0]!.statements(dialect),
    `INSERT INTO ${p}schema_migrations (version, name, applied_at) VALUES (1, '${MIGRATIONS[0]!.name}', '2030-01-01T00:00:00.000Z')`,
    payment(1, 'pay_old', JSON.stringify({ amount: '42.10', email: ' Buyer@Example.com ' })),
    payment(2, 'pay_odd', JSON.stringify({ amount: 'n/a' })),
    `INSERT INTO ${p}resources (kind, id, outcome, outcome_rank, snapshot, last_news_at, open, created_at, updated_at)
     VALUES ('payment', 'pay_elsewhere', 'paid', 2, '${JSON.stringify({ amount: '1', referenceId: 'B-7' })}', '2030-01-01T00:00:03.000Z', ${dialect.name === 'sqlite' ? 1 : 'true'}, '2030-01-01T00:00:03.000Z', '2030-01-01T00:00:03.000Z')`,
    // A handler run waiting for its second attempt, as version 1 kept it.
    `INSERT INTO ${p}runs (key, kind, status, attempts, next_attempt_at, data, created_at, updated_at)
     VALUES ('payment:pay_old:paid', 'fulfillment', 'pending', 1, '2030-01-01T00:00:04.000Z', '{}', '2030-01-01T00:00:04.000Z', '2030-01-01T00:00:04.000Z')`,
  ];
}

/** What every later version must find in a store written at version 1. */
async function findsWhatVersionOneWrote(store: Store): Promise<void> {
  expect((await store.searchResources({ find: 'buyer@example.com' })).map((row) => row.id)).toEqual(['pay_old']);
  expect((await store.searchResources({ amountMin: '42.1', amountMax: '42.1' })).map((row) => row.id)).toEqual(['pay_old']);
  expect((await store.searchResources({})).map((row) => `${row.id} ${row.handler}`)).toEqual(['pay_elsewhere none', 'pay_odd none', 'pay_old pending']);
  // Made without the checkout helper: its referenceId is its order id.
  expect((await store.searchResources({ find: 'B-7' })).map((row) => row.orderId)).toEqual(['B-7']);
  expect((await store.searchResources({ find: 'A-1' })).map((row) => row.id)).toEqual(['pay_old']);
  // Written after the migration, by the same statement as ever.
  await store.updateResource({ kind: 'payment', id: 'pay_new', outcome: 'paid', snapshot: { amount: '5', email: 'NEW@example.com' } });
  expect((await store.searchResources({ find: 'new@EXAMPLE.com' })).map((row) => row.id)).toEqual(['pay_new']);
  // Its run has counted no outage; an attempt failed by one is counted apart.
  expect(await store.getRun('payment:pay_old:paid')).toMatchObject({ attempts: 1, outageAttempts: 0 });
  await store.claimRun('payment:pay_old:paid', { owner: 'w', leaseMs: 1000, now: new Date('2030-01-01T00:00:05.000Z') });
  await store.failRun('payment:pay_old:paid', 'w', {
    error: 'no answer',
    retryAt: '2030-01-01T00:01:00.000Z',
    outage: true,
    now: new Date('2030-01-01T00:00:06.000Z'),
  });
  expect(await store.getRun('payment:pay_old:paid')).toMatchObject({ attempts: 2, outageAttempts: 1 });
}

/** A SQLite store's folder, its file written at schema version 1. */
async function sqliteAtVersionOne(): Promise<string> {
  const dir = await tempDir('ck-migrate-v1-');
  const database = sqliteDatabase({ path: `${dir}/${STORE_FILE}` });
  await database.transaction(async (tx) => {
    for (const text of atVersionOne(sqliteDialect)) await tx.query({ text });
  });
  await database.close();
  return dir;
}

describe('a store written by schema version 1', () => {
  it('SQLite file: the next open migrates it, finds its payments by e-mail and amount, and a second instance and a restart read the same', async () => {
    const dir = await sqliteAtVersionOne();

    const store = new SqliteStore({ dir });
    await store.open();
    await findsWhatVersionOneWrote(store);
    const beside = new SqliteStore({ dir, readonly: true });
    await beside.open();
    expect((await beside.searchResources({ find: 'new@example.com' })).map((row) => row.id)).toEqual(['pay_new']);
    expect(await beside.getRun('payment:pay_old:paid')).toMatchObject({ attempts: 2, outageAttempts: 1 });
    await beside.close();
    await store.close();
    const restarted = new SqliteStore({ dir });
    await restarted.open();
    expect((await restarted.searchResources({ find: 'buyer@example.com' })).map((row) => row.id)).toEqual(['pay_old']);
    expect(await restarted.getRun('payment:pay_old:paid')).toMatchObject({ attempts: 2, outageAttempts: 1 });
    await restarted.close();
  });

  it('SQLite file: `checkout-kit migrate` brings it up to date, and says what it applied', async () => {
    const dir = await sqliteAtVersionOne();
    const env = { CHECKOUT_STORE: `file:${dir}` };
    const first = await runCli(['migrate', '--json'], { cwd: dir, env });
    expect(first).toMatchObject({ code: 0, stderr: '' });
    expect((JSON.parse(first.stdout) as { applied: Array<{ version: number }> }).applied.map((row) => row.version)).toEqual(
      MIGRATIONS.slice(1).map((m) => m.version),
    );
    expect((await runCli(['migrate'], { cwd: dir, env })).stdout).toContain(`up to date at version ${LATEST_VERSION}`);
    const store = new SqliteStore({ dir, readonly: true });
    await store.open();
    expect((await store.searchResources({ find: 'buyer@example.com' })).map((row) => row.id)).toEqual(['pay_old']);
    await store.close();
    // Where no store is, nothing is made.
    expect(await runCli(['migrate'], { cwd: dir, env: { CHECKOUT_STORE: 'file:nowhere' } })).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/No store at .*nowhere.*nothing to migrate/),
    });
  });

  it('PostgreSQL: the next open migrates it and finds its payments by e-mail and amount', async () => {
    const schema = randomSchema();
    try {
      for (const text of atVersionOne(postgresDialect(schema))) await databases.query(text);
      const store = await databases.store({ schema });
      await store.open();
      await findsWhatVersionOneWrote(store);
      await store.close();
    } finally {
      await databases.drop(schema);
    }
  });
});

describe('a store a newer checkout-kit has migrated', () => {
  const newer = LATEST_VERSION + 1;
  const refused = (schema: string) =>
    `The store ${schema} was written by a newer checkout-kit (schema version ${newer}; this one knows up to ${LATEST_VERSION}): upgrade checkout-kit, or restore a backup this version made.`;

  it('SQLite file: refused on open, read-only or not, and by migrate; nothing written', async () => {
    const dir = await tempDir('ck-migrate-newer-');
    const store = new SqliteStore({ dir });
    await store.open();
    await store.close();
    const database = sqliteDatabase({ path: `${dir}/${STORE_FILE}` });
    await database.query({
      text: `INSERT INTO schema_migrations (version, name, applied_at) VALUES (${newer}, 'from the future', '2030-01-01T00:00:00.000Z')`,
    });
    await database.close();
    for (const readonly of [false, true]) {
      const again = new SqliteStore({ dir, readonly });
      await expect(again.open(), `readonly: ${readonly}`).rejects.toThrow(refused(again.file));
      if (!readonly) await expect(again.migrate()).rejects.toThrow(refused(again.file));
      await again.close();
    }
  });

  it('PostgreSQL: refused on open', async () => {
    const schema = randomSchema();
    try {
      const store = await databases.store({ schema });
      await store.open();
      await databases.query(`INSERT INTO "${schema}".schema_migrations (version, name, applied_at) VALUES (${newer}, 'from the future', now())`);
      await store.close();
      const again = await databases.store({ schema });
      await expect(again.open()).rejects.toThrow(refused(schema));
      await again.close();
    } finally {
      await databases.drop(schema);
    }
  });
});

import net from 'node:net';
import { Writable } from 'node:stream';
import pg from 'pg';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { run } from '../../src/cli/program.js';
import { ConfigError, StoreError } from '../../src/errors/index.js';
import { LATEST_VERSION, MIGRATIONS, PostgresStore } from '../../src/store/postgres/index.js';
import { storeContract } from './contract.js';
import { sampleEvent } from './fixtures/sample-event.js';
import { BACKEND, DATABASE_URL, randomSchema, TestDatabases } from './postgres/test-database.js';

const databases = new TestDatabases();
afterAll(() => databases.dispose());

if (!DATABASE_URL) {
  console.log(
    'test/store/postgres.test.ts: DATABASE_URL is not set, so the PostgresStore tests run on PGlite (in-process); the tests that need a server are skipped.',
  );
}

storeContract(`PostgresStore (${BACKEND})`, () => databases.fresh());

describe(`PostgresStore migrations (${BACKEND})`, () => {
  it('creates the schema on open, records each version once, and applies nothing the second time', async () => {
    const store = await databases.store();
    const first = await store.migrate();
    expect(first).toMatchObject({ schema: store.schema, applied: MIGRATIONS.map(({ version, name }) => ({ version, name })), current: LATEST_VERSION });
    expect(first.versions.map((row) => row.version)).toEqual(MIGRATIONS.map((migration) => migration.version));
    expect(await store.migrate()).toMatchObject({ applied: [], current: LATEST_VERSION });
    await store.open();
    const tables = await databases.query<{ table_name: string }>(
      'SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name',
      [store.schema],
    );
    expect(tables.map((row) => row.table_name)).toEqual([
      'activity',
      'checkout_attempts',
      'dead_letters',
      'events',
      'locks',
      'resources',
      'runs',
      'schema_migrations',
      'tenant_credentials',
      'tenant_merchants',
    ]);
    expect(await databases.query('SELECT version FROM "' + store.schema + '".schema_migrations')).toHaveLength(MIGRATIONS.length);
    await store.close();
  });

  it('applies each version exactly once when five instances start together', async () => {
    const schema = randomSchema();
    const stores = await Promise.all(Array.from({ length: 5 }, () => databases.store({ schema })));
    const reports = await Promise.all(stores.map((store) => store.migrate()));
    // Each migration takes the lock on its own, so one instance may apply a later version than another: compare the set, in order.
    const applied = reports.flatMap((report) => report.applied.map((migration) => migration.version)).sort((a, b) => a - b);
    expect(applied).toEqual(MIGRATIONS.map((migration) => migration.version));
    for (const report of reports) expect(report.current).toBe(LATEST_VERSION);
    await Promise.all(stores.map((store) => store.open()));
    expect(await stores[0]!.insertEvent(sampleEvent('evt_1'))).toEqual({ inserted: true });
    expect(await stores[4]!.insertEvent(sampleEvent('evt_1'))).toEqual({ inserted: false });
    await Promise.all(stores.map((store) => store.close()));
  });

  it('with migrate: false, refuses to open an outdated schema and says how to fix it', async () => {
    const schema = randomSchema();
    const strict = await databases.store({ schema, migrate: false });
    const error = await strict.open().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(StoreError);
    expect((error as Error).message).toMatch(new RegExp(`schema version 0, this checkout-kit needs ${LATEST_VERSION}: run \`checkout-kit migrate\``));
    const migrating = await databases.store({ schema });
    await migrating.open();
    await migrating.close();
    await strict.open();
    expect(await strict.insertEvent(sampleEvent('evt_1'))).toEqual({ inserted: true });
    await strict.close();
  });

  it('with mustExist, refuses a schema checkout-kit never set up without creating it, and opens one it did', async () => {
    const schema = randomSchema();
    const reader = await databases.store({ schema, mustExist: true });
    const error = await reader.open().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(
      new RegExp(`^No checkout-kit store in .*, schema ${schema}: nothing was ever stored there\\. Check CHECKOUT_STORE`),
    );
    expect(await databases.query('SELECT 1 FROM information_schema.schemata WHERE schema_name = $1', [schema])).toEqual([]);
    const writer = await databases.store({ schema });
    await writer.open();
    await writer.insertEvent(sampleEvent('evt_1'));
    await writer.close();
    await reader.open();
    expect((await reader.getEvent('evt_1'))?.id).toBe('evt_1');
    await reader.close();
  });
});

describe(`PostgresStore storage (${BACKEND})`, () => {
  it('keeps an ordinary body as plain text in the table, and one PostgreSQL text cannot hold escaped', async () => {
    const { store, cleanup } = await databases.fresh();
    const plain = sampleEvent('evt_plain');
    await store.insertEvent(plain);
    await store.insertEvent(sampleEvent('evt_nul', { body: 'a\u0000b \ud800' }));
    const rows = await databases.query<{ id: string; body: string; body_escaped: boolean; bytes: number }>(
      `SELECT id, body, body_escaped, octet_length(body) AS bytes FROM "${store.schema}".events ORDER BY id`,
    );
    expect(rows).toEqual([
      { id: 'evt_nul', body: JSON.stringify('a\u0000b \ud800'), body_escaped: true, bytes: expect.any(Number) },
      { id: 'evt_plain', body: plain.body, body_escaped: false, bytes: Buffer.byteLength(plain.body!) },
    ]);
    expect((await store.getEvent('evt_nul'))?.body).toBe('a\u0000b \ud800');
    await cleanup();
  });

  it('keeps times from the service verbatim and snapshots as queryable JSONB', async () => {
    const { store, cleanup } = await databases.fresh();
    await store.insertEvent(sampleEvent('evt_1', { createdAt: '2025-01-01T00:00:00Z' }));
    expect((await store.getEvent('evt_1'))?.createdAt).toBe('2025-01-01T00:00:00Z');
    const snapshot = { id: 'pay_1', amount: '10.50', amountReceived: '10.50', nested: { list: [1, 'two'] } };
    const { record } = await store.updateResource({ kind: 'payment', id: 'pay_1', outcome: 'paid', snapshot, expiresAt: '2025-01-01T01:00:00+01:00' });
    expect(record).toMatchObject({ snapshot, expiresAt: '2025-01-01T01:00:00+01:00' });
    const [row] = await databases.query<{ received: string }>(`SELECT snapshot->>'amountReceived' AS received FROM "${store.schema}".resources`);
    expect(row?.received).toBe('10.50');
    await cleanup();
  });

  it('reports advanced to exactly one of 20 concurrent first sights of a paid resource', async () => {
    const { store, cleanup } = await databases.fresh();
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => store.updateResource({ kind: 'payment', id: 'pay_1', outcome: i % 2 ? 'paid' : 'overpaid', source: 'webhook' })),
    );
    expect(results.filter((result) => result.advanced)).toHaveLength(1);
    expect((await store.getResource('payment', 'pay_1'))?.outcome).toBe(results.find((result) => result.advanced)?.record.outcome);
    await cleanup();
  });

  it('writes concurrent deliveries in batches: duplicates insert once, a bad event fails alone', async () => {
    const { store, cleanup } = await databases.fresh();
    const ids = Array.from({ length: 300 }, (_, i) => `evt_${i % 120}`);
    const results = await Promise.allSettled([
      ...ids.map((id) => store.insertEvent(sampleEvent(id))),
      store.insertEvent(sampleEvent('evt_bad', { receivedAt: 'not a time' })),
    ]);
    const bad = results.pop();
    expect(bad).toMatchObject({ status: 'rejected', reason: expect.objectContaining({ message: expect.stringMatching(/not a time/) }) });
    const inserted = results.map((result, i) => (result.status === 'fulfilled' && result.value.inserted ? ids[i] : undefined)).filter(Boolean);
    expect(inserted.sort()).toEqual([...new Set(ids)].sort());
    expect(await store.listRuns({ kind: 'event', limit: 1000 })).toHaveLength(120);
    expect(await store.getEvent('evt_bad')).toBeUndefined();
    await cleanup();
  });

  it('keeps a dispatch run with its event: event:<id> runs come only from insertEvent', async () => {
    const { store, cleanup } = await databases.fresh();
    await expect(store.enqueueRun({ key: 'event:evt_1', kind: 'event', data: {} })).rejects.toThrow(/queued by insertEvent/);
    await expect(store.enqueueRun({ key: 'other', kind: 'event', data: {} })).rejects.toThrow(StoreError);
    await store.enqueueRun({ key: 'payment:pay_0:paid', kind: 'fulfillment', data: {} });
    await store.insertEvent(sampleEvent('evt_1'));
    await store.enqueueRun({ key: 'payment:pay_1:paid', kind: 'fulfillment', data: {} });
    const run = await store.getRun('event:evt_1');
    expect(await store.enqueueRun({ key: 'event:evt_1', kind: 'event', data: { other: true } })).toEqual({ inserted: false, run });
    // Runs of both kinds list in the order they were queued.
    expect((await store.listRuns()).map((listed) => listed.key)).toEqual(['payment:pay_0:paid', 'event:evt_1', 'payment:pay_1:paid']);
    await cleanup();
  });

  it('gives a lock to exactly one of 20 concurrent owners', async () => {
    const { store, cleanup } = await databases.fresh();
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => store.acquireLock('reconcile', `owner_${i}`, 60_000)));
    expect(results.filter(Boolean)).toHaveLength(1);
    await cleanup();
  });
});

describe('PostgresStore options', () => {
  it('takes the schema from ?schema= and keeps credentials out of its description', async () => {
    const store = new PostgresStore({ connectionString: 'postgres://shop:s3cret@db.internal:6543/shop?schema=ck_shop' });
    expect(store.schema).toBe('ck_shop');
    expect(store.description).toBe('PostgreSQL db.internal:6543/shop, schema ck_shop');
    await store.close();
    expect(new PostgresStore({ connectionString: 'postgres://db.internal/shop', schema: 'other' }).schema).toBe('other');
    expect(new PostgresStore({ connectionString: 'postgres://db.internal/shop' }).schema).toBe('checkout_kit');
  });

  it('refuses ambiguous connections and unsafe schema names', () => {
    expect(() => new PostgresStore({})).toThrow(ConfigError);
    expect(() => new PostgresStore({ connectionString: 'postgres://a/b', pool: new pg.Pool() })).toThrow(/exactly one of connectionString, pool or database/);
    expect(() => new PostgresStore({ connectionString: 'postgres://a/b', schema: 'x"; DROP TABLE y; --' })).toThrow(/schema name/);
  });

  it('fails to open with one clear StoreError when the server cannot be reached', async () => {
    const store = new PostgresStore({ connectionString: 'postgres://nobody@127.0.0.1:1/none' });
    await expect(store.open()).rejects.toThrow(/^Could not open the store PostgreSQL 127\.0\.0\.1:1\/none, schema checkout_kit: .*Check CHECKOUT_STORE/);
    await store.close();
  });

  it('names a certificate file the URL gives that cannot be read, as a configuration error', async () => {
    const store = new PostgresStore({ connectionString: 'postgres://nobody@127.0.0.1:1/none?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem' });
    const error = await store.open().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(
      /^Could not open the store .*: the file \/nonexistent\/ca\.pem that CHECKOUT_STORE names \(sslrootcert, sslcert or sslkey\) cannot be read \(ENOENT: .*\)\. Check the path and its permissions\.$/,
    );
    await store.close();
  });
});

describe.skipIf(!DATABASE_URL)('PostgresStore on a server', () => {
  it('lets two stores in different schemas share one pool (prepared statement names differ)', async () => {
    const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 1 });
    const [a, b] = await Promise.all([databases.store({ pool, connectionString: undefined }), databases.store({ pool, connectionString: undefined })]);
    await a!.open();
    await b!.open();
    expect(await a!.insertEvent(sampleEvent('evt_1'))).toEqual({ inserted: true });
    expect(await b!.insertEvent(sampleEvent('evt_1'))).toEqual({ inserted: true });
    expect((await b!.getEvent('evt_1'))?.id).toBe('evt_1');
    await a!.close();
    await b!.close();
    expect(pool.totalCount).toBe(1);
    await pool.end();
  });

  /** Connections the server has open for `application` (named in the store's URL). */
  const connectionsOf = async (application: string) =>
    Number((await databases.query<{ n: string }>(`SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = $1`, [application]))[0]!.n);

  it('opens all its connections in open() with warmPool, and only what it uses without', async () => {
    const warm = `ck_warm_${randomSchema('a')}`;
    const cold = `ck_cold_${randomSchema('a')}`;
    const warmStore = await databases.store({ connectionString: `${DATABASE_URL}?application_name=${warm}`, poolMax: 4, warmPool: true });
    const coldStore = await databases.store({ connectionString: `${DATABASE_URL}?application_name=${cold}`, poolMax: 4 });
    try {
      await warmStore.open();
      await coldStore.open();
      expect(await connectionsOf(warm)).toBe(4);
      expect(await connectionsOf(cold)).toBe(1);
      // The warm connections are the pool's: queries run on them, and close() ends them.
      expect(await warmStore.insertEvent(sampleEvent('evt_warm'))).toEqual({ inserted: true });
      expect(await connectionsOf(warm)).toBe(4);
    } finally {
      await warmStore.close();
      await coldStore.close();
    }
    // A closed connection leaves the server's list a moment after the client has gone.
    await expect.poll(() => connectionsOf(warm)).toBe(0);
  });

  it('fails a statement that waits past its timeout (a table locked elsewhere) with a busy StoreError, and any other failure of the server with a StoreError', async () => {
    const store = await databases.store({ statementTimeoutMs: 200 });
    await store.open();
    const attempt = { orderId: 'o-1', kind: 'payment' as const, idempotencyKey: 'k-1', requestHash: 'h-1' };
    const holder = new pg.Client({ connectionString: DATABASE_URL });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(`LOCK TABLE "${store.schema}".checkout_attempts IN ACCESS EXCLUSIVE MODE`);
      const busy = await store.putCheckoutAttempt(attempt).catch((error: unknown) => error);
      expect(busy).toBeInstanceOf(StoreError);
      expect(busy).toMatchObject({ reason: 'busy', message: expect.stringMatching(/ is busy \(.*statement timeout\): nothing was written; try again\.$/) });
      await holder.query('ROLLBACK');
      expect((await store.putCheckoutAttempt(attempt)).inserted).toBe(true);
      // A table dropped by hand: the server refuses the statement.
      await holder.query(`DROP TABLE "${store.schema}".locks`);
      const failed = await store.acquireLock('reconcile', 'w', 1000).catch((error: unknown) => error);
      expect(failed).toBeInstanceOf(StoreError);
      expect(failed).toMatchObject({
        reason: undefined,
        message: expect.stringMatching(/^The store PostgreSQL .* failed: relation ".*locks" does not exist\.$/),
      });
    } finally {
      await holder.end();
      await store.close();
    }
  });

  it('fails work with an unreachable StoreError once the server cannot be reached, and works again when it can', async () => {
    // The store reaches the server through a proxy this test can cut, as a server going down would.
    const target = new URL(DATABASE_URL!);
    const sockets = new Set<net.Socket>();
    const proxy = net.createServer((client) => {
      const upstream = net.connect(Number(target.port || 5432), target.hostname);
      for (const socket of [client, upstream]) {
        sockets.add(socket);
        socket.on('error', () => undefined).on('close', () => sockets.delete(socket));
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const port = (proxy.address() as net.AddressInfo).port;
    const via = new URL(DATABASE_URL!);
    via.hostname = '127.0.0.1';
    via.port = String(port);
    const store = await databases.store({ connectionString: via.toString() });
    await store.open();
    try {
      await store.acquireLock('reconcile', 'w', 1000);
      await new Promise<void>((resolve) => {
        proxy.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      });
      const failed = await store.acquireLock('reconcile', 'w', 1000).catch((error: unknown) => error);
      expect(failed).toBeInstanceOf(StoreError);
      expect(failed).toMatchObject({
        reason: 'unreachable',
        message: expect.stringMatching(
          /^The store PostgreSQL 127\.0\.0\.1:\d+\/.* cannot be reached \(.*\): nothing was written; check that the server is up\.$/,
        ),
      });
      await new Promise<void>((resolve) => proxy.listen(port, '127.0.0.1', resolve));
      await expect.poll(() => store.acquireLock('reconcile', 'w', 1000).catch(() => false), { timeout: 10_000 }).toBe(true);
    } finally {
      proxy.close();
      for (const socket of sockets) socket.destroy();
      await store.close();
    }
  });

  it('fails to open with one clear StoreError when the server refuses part of a warm pool, and lets go of the rest', async () => {
    // A role allowed 2 connections, a pool of 4: the server refuses the 3rd and 4th.
    const role = `ck_limited_${randomSchema('r')}`;
    await databases.query(`CREATE ROLE "${role}" LOGIN CONNECTION LIMIT 2`);
    await databases.query(`GRANT CREATE ON DATABASE "${new URL(DATABASE_URL!).pathname.slice(1)}" TO "${role}"`);
    const url = new URL(DATABASE_URL!);
    url.username = role;
    url.searchParams.set('application_name', role);
    const store = await databases.store({ connectionString: url.toString(), poolMax: 4, warmPool: true });
    try {
      await expect(store.open()).rejects.toThrow(/^Could not open the store .*too many connections/);
      // Before: the connections that had opened were never released, and close() waited for them forever.
      await store.close();
      await expect.poll(() => connectionsOf(role)).toBe(0);
    } finally {
      await databases.query(`DROP OWNED BY "${role}" CASCADE`).catch(() => undefined);
      await databases.query(`DROP ROLE IF EXISTS "${role}"`);
    }
  });
});

/**
 * A server that answers every connection as PostgreSQL does under SCRAM authentication (its
 * default): AuthenticationSASL, then, after the client's first message, AuthenticationSASLContinue.
 */
function scramServer(): net.Server {
  /** An authentication message: 'R', its length, the request code, then `data`. */
  const authentication = (code: number, data: string) => {
    const message = Buffer.alloc(9 + data.length);
    message.write('R');
    message.writeInt32BE(8 + data.length, 1);
    message.writeInt32BE(code, 5);
    message.write(data, 9);
    return message;
  };
  return net.createServer((socket) => {
    let received = Buffer.alloc(0);
    let answered = 0;
    socket.on('error', () => undefined);
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      // The startup message has no type byte; the client's next message (SASLInitialResponse) has one.
      const offset = answered === 0 ? 0 : 1;
      if (received.length < offset + 4 || received.length < offset + received.readInt32BE(offset)) return;
      received = Buffer.alloc(0);
      answered += 1;
      socket.write(answered === 1 ? authentication(10, 'SCRAM-SHA-256\0\0') : authentication(11, 'r=abc,s=c2FsdA==,i=4096'));
    });
  });
}

/** Run the CLI in-process and capture what it prints. */
async function cli(args: string[], env: NodeJS.ProcessEnv) {
  let stdout = '';
  let stderr = '';
  const sink = (write: (text: string) => void) => new Writable({ write: (chunk, _encoding, done) => (write(String(chunk)), done()) });
  const code = await run(['node', 'checkout-kit', ...args], {
    stdout: sink((text) => (stdout += text)),
    stderr: sink((text) => (stderr += text)),
    env,
    cwd: process.cwd(),
  });
  return { code, stdout, stderr };
}

describe('checkout-kit migrate', () => {
  it('exits 2 with one line when CHECKOUT_STORE keeps nothing to migrate', async () => {
    const result = await cli(['migrate'], { CHECKOUT_STORE: 'memory:' });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe(
      'checkout-kit: migrate is for file: and postgres:// stores, but CHECKOUT_STORE is a memory: store, which keeps nothing to migrate.\n',
    );
  });

  it('exits 1 with one line when the server cannot be reached', async () => {
    const result = await cli(['migrate'], { CHECKOUT_STORE: 'postgres://nobody:pw@127.0.0.1:1/none' });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^checkout-kit: Could not migrate PostgreSQL 127\.0\.0\.1:1\/none, schema checkout_kit: .+\n$/);
    expect(result.stderr).not.toContain('pw');
  });

  it('exits 2 with one line saying to give the password when the server asks for one (SCRAM) and the URL has none', async () => {
    vi.stubEnv('PGPASSWORD', undefined);
    const server = scramServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as net.AddressInfo;
    try {
      for (const args of [['migrate'], ['events', 'list']]) {
        const result = await cli(args, { CHECKOUT_STORE: `postgres://shop@127.0.0.1:${port}/shop` });
        expect([result.code, result.stdout], args.join(' ')).toEqual([2, '']);
        expect(result.stderr).toBe(
          `checkout-kit: Could not open the store PostgreSQL 127.0.0.1:${port}/shop, schema checkout_kit: the server asks for a password and none was given. Put it in CHECKOUT_STORE (postgres://user:password@host/database) or in PGPASSWORD.\n`,
        );
      }
    } finally {
      vi.unstubAllEnvs();
      server.close();
    }
  });

  it.skipIf(!DATABASE_URL)('applies the migrations once and prints the versions, as text or --json', async () => {
    const schema = randomSchema();
    const env = { CHECKOUT_STORE: `${DATABASE_URL}?schema=${schema}` };
    try {
      const first = await cli(['migrate', '--json'], env);
      expect(first).toMatchObject({ code: 0, stderr: '' });
      expect(JSON.parse(first.stdout)).toMatchObject({
        schema,
        applied: MIGRATIONS.map(({ version, name }) => ({ version, name })),
        current: LATEST_VERSION,
        store: expect.stringContaining(`schema ${schema}`),
      });
      const second = await cli(['migrate'], env);
      expect(second.code).toBe(0);
      expect(second.stdout).toContain(`up to date at version ${LATEST_VERSION} (nothing to apply)`);
    } finally {
      await databases.drop(schema);
    }
  });
});

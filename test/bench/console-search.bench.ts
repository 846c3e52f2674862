/**
 * The operator's search and list filters at scale: how long `checkout-kit serve --console` takes
 * to answer a search or a filtered list over BENCH_SEARCH_PAYMENTS (100,000) payments, on the
 * embedded SQLite store and on PostgreSQL. Goal: every search under 100 ms.
 *
 * The history is written straight into the store by the store's own API (as `serve` writes it,
 * without a service to confirm 100,000 payments): for each payment its `payment.paid` event, its
 * record (outcome paid, the stand-in's ~1.4 KB snapshot with an order id, an amount from 1.00 to
 * 999.99 and one of PAYMENTS ÷ 20 buyers' e-mails, so an e-mail has about 20 orders) and its handler run
 * queued with it; then every run is marked done but one in 1,000, failed for good. `serve
 * --console` (the package's bin) then starts on that store, against the stand-in service in its own
 * process, beside a bare fastify child answering the same GETs (the machine's floor, same run).
 *
 * Each request below is sent BENCH_SEARCH_ROUNDS (15) times, one at a time, all of them in turn
 * round by round; rows give p50 and the highest, against bare fastify's p50. A search must find
 * what it looks for (its status and its page are checked), or the bench fails.
 *
 * Run: `npm run bench -- console-search` (DATABASE_URL for PostgreSQL, else the default local one;
 * BENCH_SEARCH_STORES=sqlite or postgres for one of them).
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { sqliteDatabase } from '../../src/store/sqlite/sqlite-database.js';
import { SqliteStore, type Store } from '../../src/store/index.js';
import { PostgresStore } from '../../src/store/postgres/index.js';
import { STORE_FILE } from '../../src/store/sqlite/sqlite-store.js';
import { percentile } from '../support/percentile.js';
import type { BenchResult } from './load.js';
import { startChild } from './serve-children.js';
import { checkPostgres, DEFAULT_DATABASE_URL, dropSchema, envNumber, startServe, withSchema } from './serve-harness.js';
import { newRunTag, payment, uuidFor } from './serve-payloads.js';

const PAYMENTS = Math.round(envNumber('BENCH_SEARCH_PAYMENTS', 100_000));
const ROUNDS = Math.round(envNumber('BENCH_SEARCH_ROUNDS', 15));
// About 20 orders per buyer, whatever the size.
const BUYERS = Math.max(2, Math.floor(PAYMENTS / 20));
const GOAL_MS = 100;

interface Seeded {
  tag: string;
  /** A payment in the middle of the history, and the newest whose handler failed. */
  middle: number;
  failed: number;
  /** The UTC day the history starts on. */
  firstDay: string;
}

const paymentId = (tag: string, n: number) => uuidFor(tag, n);
const orderOf = (n: number) => `A-${100_000 + n}`;
const emailOf = (n: number) => `buyer${n % BUYERS}@example.com`;
const amountOf = (n: number) => `${1 + (n % 999)}.${String(n % 100).padStart(2, '0')}`;

/** The history, through the store's API; the runs' final states through `finish` (one UPDATE). */
async function seed(store: Store, finish: (statements: string[]) => Promise<void>, prefix: string): Promise<Seeded> {
  const tag = newRunTag();
  const started = Date.now() - 30 * 86_400_000;
  for (let i = 0; i < PAYMENTS; i += 500) {
    await Promise.all(
      Array.from({ length: Math.min(500, PAYMENTS - i) }, async (_, j) => {
        const n = i + j;
        const id = paymentId(tag, n);
        const at = new Date(started + n * 20_000);
        const snapshot: Record<string, unknown> = {
          ...payment(id, 'paid', at.getTime()),
          referenceId: orderOf(n),
          email: emailOf(n),
          amount: amountOf(n),
          amountReceived: amountOf(n),
        };
        const eventId = `evt_${tag}_${n}`;
        await store.insertEvent(
          {
            id: eventId,
            type: 'payment.paid',
            environment: 'test',
            createdAt: at.toISOString(),
            receivedAt: at.toISOString(),
            resourceKind: 'payment',
            resourceId: id,
            body: JSON.stringify({ id: eventId, type: 'payment.paid', data: snapshot }),
          },
          at,
        );
        await store.updateResource(
          {
            kind: 'payment',
            id,
            environment: 'test',
            orderId: orderOf(n),
            outcome: 'paid',
            source: 'webhook',
            snapshot,
            expiresAt: String(snapshot.expiresAt),
            open: false,
          },
          at,
          { queue: () => ({ key: `payment:${id}:paid`, kind: 'fulfillment', data: { kind: 'payment', id, outcome: 'paid' } }) },
        );
      }),
    );
    if (i % 20_000 === 0) process.stderr.write(`bench: console-search: ${i} of ${PAYMENTS} payments written\n`);
  }
  await finish([
    `UPDATE ${prefix}runs SET status = 'done', completed_at = updated_at`,
    `UPDATE ${prefix}runs SET status = 'failed', last_error = 'no stock' WHERE key IN (${Array.from(
      { length: Math.ceil(PAYMENTS / 1000) },
      (_, k) => k * 1000 + 7,
    )
      .filter((n) => n < PAYMENTS)
      .map((n) => `'payment:${paymentId(tag, n)}:paid'`)
      .join(', ')})`,
  ]);
  // The newest failed handler: the first row of the failed list.
  return {
    tag,
    middle: Math.floor(PAYMENTS / 2),
    failed: Math.floor((PAYMENTS - 8) / 1000) * 1000 + 7,
    firstDay: new Date(started).toISOString().slice(0, 10),
  };
}

interface Probe {
  name: string;
  path: string;
  /** What the answer must be: a redirect to this path, or a page holding this text. */
  expect: { redirect: string } | { contains: string };
  ms: number[];
}

function probes(seeded: Seeded): Probe[] {
  const id = paymentId(seeded.tag, seeded.middle);
  const page = `/checkout-kit/payments/${id}`;
  const probe = (name: string, path: string, expect: Probe['expect']): Probe => ({ name, path, expect, ms: [] });
  return [
    probe('search: order id', `/checkout-kit/search?q=${orderOf(seeded.middle)}`, { redirect: page }),
    probe('search: payment id', `/checkout-kit/search?q=${id}`, { redirect: page }),
    probe('search: event id', `/checkout-kit/search?q=evt_${seeded.tag}_${seeded.middle}`, { redirect: page }),
    probe('search: e-mail (~20 orders)', `/checkout-kit/search?q=${encodeURIComponent(emailOf(seeded.middle).toUpperCase())}`, { contains: id }),
    probe('search: nothing found', '/checkout-kit/search?q=A-0', { contains: 'nothing found' }),
    probe('list: handler failed for good', '/checkout-kit/payments?handler=failed', { contains: paymentId(seeded.tag, seeded.failed) }),
    probe('list: amount 500–501, paid', '/checkout-kit/payments?amountMin=500&amountMax=501&outcome=paid', { contains: 'data-handler=' }),
    probe('list: one day', `/checkout-kit/payments?from=${seeded.firstDay}&to=${seeded.firstDay}`, { contains: 'data-handler=' }),
    probe('list: newest, page 1', '/checkout-kit/payments', { contains: 'data-handler=' }),
  ];
}

async function timeOnce(base: string, probe: Probe): Promise<void> {
  const started = performance.now();
  const response = await fetch(`${base}${probe.path}`, { redirect: 'manual', signal: AbortSignal.timeout(30_000) });
  const body = await response.text();
  probe.ms.push(performance.now() - started);
  const ok =
    'redirect' in probe.expect
      ? response.status === 303 && response.headers.get('location') === probe.expect.redirect
      : response.status === 200 && body.includes(probe.expect.contains);
  if (!ok) throw new Error(`${probe.name}: ${probe.path} answered ${response.status} ${response.headers.get('location') ?? body.slice(0, 200)}`);
}

async function bareFloor(): Promise<number[]> {
  const bare = await startChild({ kind: 'bare' });
  try {
    const ms: number[] = [];
    for (let i = 0; i < ROUNDS * 3; i++) {
      const started = performance.now();
      await (
        await fetch(`http://127.0.0.1:${bare.port}/webhooks/checkout`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } })
      ).text();
      ms.push(performance.now() - started);
    }
    return ms;
  } finally {
    await bare.close();
  }
}

async function measure(storeName: string, storeUrl: string, seeded: Seeded, floorP50: number): Promise<BenchResult[]> {
  const standin = await startChild({ kind: 'standin', mode: 'paid' });
  const serve = await startServe({ servicePort: standin.port, store: storeUrl, args: ['--console'], listenTimeoutSeconds: 120 });
  try {
    const base = `http://127.0.0.1:${serve.port}`;
    const list = probes(seeded);
    for (const probe of list) await timeOnce(base, probe); // warm-up, not counted
    for (const probe of list) probe.ms.length = 0;
    for (let round = 0; round < ROUNDS; round++) for (const probe of list) await timeOnce(base, probe);
    return list.map((probe) => {
      const p50 = percentile(probe.ms, 50);
      const max = Math.max(...probe.ms);
      return {
        name: `console-search ${storeName}: ${probe.name}`,
        eventsPerSec: 1000 / p50,
        note: `${PAYMENTS.toLocaleString('en-US')} payments; p50 ${p50.toFixed(1)} ms, max ${max.toFixed(1)} ms over ${ROUNDS}; ${(p50 / floorP50).toFixed(1)}× bare fastify's p50 (${floorP50.toFixed(2)} ms); goal < ${GOAL_MS} ms: ${max < GOAL_MS ? 'met' : 'not met'}`,
      };
    });
  } finally {
    await serve.stop();
    await standin.close();
  }
}

/** BENCH_SEARCH_STORES: `sqlite`, `postgres` or both (the default). */
const STORES = (process.env.BENCH_SEARCH_STORES ?? 'sqlite,postgres').split(',');

export async function run(): Promise<BenchResult[]> {
  const floorP50 = percentile(await bareFloor(), 50);
  const rows: BenchResult[] = [];
  if (STORES.includes('sqlite')) rows.push(...(await sqliteRows(floorP50)));
  if (STORES.includes('postgres')) rows.push(...(await postgresRows(floorP50)));
  return rows;
}

async function sqliteRows(floorP50: number): Promise<BenchResult[]> {
  const rows: BenchResult[] = [];

  const dir = await mkdtemp(join(tmpdir(), 'checkout-kit-bench-search-'));
  try {
    const store = new SqliteStore({ dir });
    await store.open();
    const started = performance.now();
    const seeded = await seed(
      store,
      async (statements) => {
        const database = sqliteDatabase({ path: join(dir, STORE_FILE) });
        await database.transaction(async (tx) => {
          for (const text of statements) await tx.query({ text });
        });
        await database.close();
      },
      '',
    );
    await store.close();
    process.stderr.write(`bench: console-search: SQLite history written in ${((performance.now() - started) / 1000).toFixed(0)} s\n`);
    rows.push(...(await measure('SQLite', `file:${dir}`, seeded, floorP50)));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  return rows;
}

async function postgresRows(floorP50: number): Promise<BenchResult[]> {
  const rows: BenchResult[] = [];
  const url = process.env.DATABASE_URL ?? DEFAULT_DATABASE_URL;
  try {
    await checkPostgres(url);
  } catch (error) {
    rows.push({ name: 'console-search PostgreSQL', eventsPerSec: 0, note: `skipped: ${(error as Error).message}` });
    return rows;
  }
  const schema = `bench_search_${randomUUID().slice(0, 8)}`;
  try {
    const store = new PostgresStore({ connectionString: url, schema });
    await store.open();
    const seeded = await seed(
      store,
      async (statements) => {
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        try {
          for (const text of statements) await client.query(text);
          // The planner's statistics, as autovacuum keeps them on a database in service (it has not run yet on a history written a minute ago).
          await client.query(`ANALYZE "${schema}".resources, "${schema}".runs, "${schema}".events`);
        } finally {
          await client.end();
        }
      },
      `"${schema}".`,
    );
    await store.close();
    rows.push(...(await measure('PostgreSQL', withSchema(url, schema), seeded, floorP50)));
  } finally {
    await dropSchema(url, schema);
  }
  return rows;
}

/**
 * PostgreSQL receiver throughput: signed ~1.2 KB payment events acknowledged per second (autocannon,
 * 50 connections, every request a new event id signed afresh), for
 *
 * - a bare receiver: fastify, `JSON.parse` for the id, one `INSERT … ON CONFLICT DO NOTHING`
 *   (no signature check, no dispatch run): the floor any PostgreSQL receiver pays;
 * - the full receiver: `createReceiver` + `checkoutWebhooks` + `PostgresStore` (verify, parse,
 *   store the event and queue its dispatch run in one statement), dispatch off (`dispatch: false`:
 *   store and acknowledge only, as an instance that leaves dispatch to others does).
 *
 * Both start with 100,000 events already stored, both use a pool of 10 connections, each runs in
 * its own child process and schema (dropped after). Needs DATABASE_URL; skipped with a note without.
 *
 * Run alone: `DATABASE_URL=postgres://postgres@127.0.0.1:5432/test node --import tsx test/bench/postgres.bench.ts`.
 */
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { listenOnLoopback } from '../support/ports.js';
import { EVENT_TEMPLATE, forkServer, ID_MARK, load, serveInChild, WEBHOOK_PATH, type BenchResult } from './load.js';

const WARMUP_SECONDS = 2;
const ROUNDS = 3;
const ROUND_SECONDS = 4;
const PRESTORED = 100_000;
const POOL_MAX = 10;
const SECRET = 'whsec_cG9zdGdyZXMtYmVuY2gtc2VjcmV0LTAxMjM0NTY3';
const ROLE_ENV = 'CHECKOUT_KIT_POSTGRES_BENCH';
const DATABASE_URL = process.env.DATABASE_URL || undefined;

type Scenario = 'bare' | 'receiver';
interface ServerConfig {
  scenario: Scenario;
  schema: string;
}

// ---------------------------------------------------------------------------------------------
// Server side (child process).

async function startServer({ scenario, schema }: ServerConfig, databaseUrl: string) {
  const { default: Fastify } = await import('fastify');
  const app = Fastify({ logger: false });
  const pool = new pg.Pool({ connectionString: databaseUrl, max: POOL_MAX });
  const table = scenario === 'bare' ? `"${schema}".bare_events` : `"${schema}".events`;

  if (scenario === 'bare') {
    await pool.query(`CREATE SCHEMA "${schema}"`);
    await pool.query(`CREATE TABLE ${table} (id text PRIMARY KEY, type text NOT NULL, received_at timestamptz NOT NULL, body text NOT NULL)`);
    await pool.query(
      `INSERT INTO ${table} SELECT 'evt_seed_' || i, 'payment.paid', now(), replace($1, '${ID_MARK}', 'seed_' || i) FROM generate_series(1, $2) AS i`,
      [EVENT_TEMPLATE, PRESTORED],
    );
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => done(null, body));
    app.post(WEBHOOK_PATH, async (request) => {
      const body = request.body as string;
      const { id, type } = JSON.parse(body) as { id: string; type: string };
      await pool.query({
        name: 'bare_insert',
        text: `INSERT INTO ${table} (id, type, received_at, body) VALUES ($1, $2, $3, $4) ON CONFLICT (id) DO NOTHING`,
        values: [id, type, new Date().toISOString(), body],
      });
      return { received: true, id };
    });
  } else {
    const { PostgresStore } = await import('../../src/store/postgres/index.js');
    const { silentLogger } = await import('../../src/log/index.js');
    const { checkoutWebhooks, createReceiver } = await import('../../src/webhooks/index.js');
    const store = new PostgresStore({ pool, schema, logger: silentLogger });
    await store.open();
    // History: 100,000 events, dispatched long ago (their runs done), written in bulk.
    await pool.query(
      `INSERT INTO ${table} (id, type, environment, created_at, received_at, resource_kind, resource_id, body, status, attempts, owner, next_attempt_at, queued_at, updated_at, completed_at)
       SELECT 'evt_seed_' || i, 'payment.paid', 'test', '2025-03-01T12:00:00.000Z', now(), 'payment', 'pay_seed_' || i, replace($1, '${ID_MARK}', 'seed_' || i), 'done', 1, 'seed', now(), now(), now(), now()
       FROM generate_series(1, $2) AS i`,
      [EVENT_TEMPLATE, PRESTORED],
    );
    const receiver = createReceiver({ store, secrets: SECRET, logger: silentLogger, dispatch: false, retention: false });
    await app.register(checkoutWebhooks, { receiver, lifecycle: false });
  }
  await pool.query(`ANALYZE ${table}`);

  const port = await listenOnLoopback(app);
  return {
    port,
    async close() {
      await app.close();
      const { rows } = await pool.query<{ count: number }>(`SELECT count(*)::int AS count FROM ${table}`);
      await pool.query(`DROP SCHEMA "${schema}" CASCADE`);
      await pool.end();
      return rows[0]?.count ?? 0;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Load side (this process).

/** A bench server in its own process (its own core), ready to take load. */
function startChild(scenario: Scenario) {
  const schema = `ck_bench_${scenario}_${randomBytes(4).toString('hex')}`;
  return forkServer({ module: import.meta.url, roleEnv: ROLE_ENV, config: { scenario, schema } satisfies ServerConfig, name: scenario });
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/**
 * Both receivers in one run, each against a fresh schema holding 100,000 events. Rounds alternate
 * (bare, full, bare, full, …) and each figure is the median of its rounds, so that drift in what
 * else the machine is doing falls on both alike.
 */
export async function run(): Promise<BenchResult[]> {
  if (!DATABASE_URL) {
    return [{ name: 'PostgreSQL receiver', eventsPerSec: 0, note: 'skipped: set DATABASE_URL=postgres://… to run the PostgreSQL benchmark' }];
  }
  const servers = await Promise.all((['bare', 'receiver'] as const).map((scenario) => startChild(scenario)));
  try {
    const rates: number[][] = [[], []];
    const latencies: number[][] = [[], []];
    const failures = [0, 0];
    for (const server of servers) await load({ port: server.port, seconds: WARMUP_SECONDS, secret: SECRET });
    for (let round = 0; round < ROUNDS; round++) {
      for (const [i, server] of servers.entries()) {
        const result = await load({ port: server.port, seconds: ROUND_SECONDS, secret: SECRET });
        rates[i]!.push(result['2xx'] / result.duration);
        latencies[i]!.push(result.latency.p99);
        failures[i]! += result.non2xx + result.errors;
      }
    }
    const stored = await Promise.all(servers.map((server) => server.close()));
    const [bare, full] = ([0, 1] as const).map((i) => {
      const notes = [`median of ${ROUNDS} rounds of ${ROUND_SECONDS} s (${rates[i]!.map(Math.round).join(', ')})`, `p99 ${median(latencies[i]!)} ms`];
      if (failures[i]! > 0) notes.push(`${failures[i]} failed requests`);
      notes.push(`${stored[i]?.toLocaleString('en-US')} rows at end`);
      return { eventsPerSec: Math.round(median(rates[i]!)), note: notes.join('; ') };
    }) as [Omit<BenchResult, 'name'>, Omit<BenchResult, 'name'>];
    return [
      { name: 'PostgreSQL, bare fastify + INSERT … ON CONFLICT DO NOTHING, 100,000 stored', ...bare },
      {
        name: 'PostgreSQL, full receiver (verify + PostgresStore.insertEvent, dispatch off), 100,000 stored',
        eventsPerSec: full.eventsPerSec,
        note: `${(full.eventsPerSec / Math.max(1, bare.eventsPerSec)).toFixed(2)}x bare (target ≥ 0.8x); ${full.note}`,
      },
    ];
  } finally {
    for (const server of servers) server.kill();
  }
}

if (process.env[ROLE_ENV]) {
  void serveInChild<ServerConfig>(ROLE_ENV, (config) => startServer(config, DATABASE_URL!));
} else if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  console.table(await run());
}

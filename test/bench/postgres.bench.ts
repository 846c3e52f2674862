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
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import { signWebhook } from '../../src/webhooks/index.js';

interface BenchResult {
  name: string;
  eventsPerSec: number;
  note?: string;
}

const CONNECTIONS = 50;
const WARMUP_SECONDS = 2;
const ROUNDS = 3;
const ROUND_SECONDS = 4;
const PRESTORED = 100_000;
const POOL_MAX = 10;
const PATH = '/webhooks/checkout';
const SECRET = 'whsec_cG9zdGdyZXMtYmVuY2gtc2VjcmV0LTAxMjM0NTY3';
const ROLE_ENV = 'CHECKOUT_KIT_POSTGRES_BENCH';
const DATABASE_URL = process.env.DATABASE_URL || undefined;

type Scenario = 'bare' | 'receiver';
interface ServerConfig {
  scenario: Scenario;
  schema: string;
}
type ChildMessage = { type: 'ready'; port: number } | { type: 'closed'; stored: number } | { type: 'error'; message: string };

// A realistic payment event (~1.2 KB); a unique suffix is spliced into its ids per request.
const ID_MARK = '@@ID@@';
const TEMPLATE = JSON.stringify({
  id: `evt_${ID_MARK}`,
  type: 'payment.paid',
  createdAt: '2025-03-01T12:00:00.000Z',
  environment: 'test',
  data: {
    id: `pay_${ID_MARK}`,
    status: 'PAID',
    environment: 'test',
    addressMode: 'EVM',
    amount: '149.90',
    amountReceived: '149.90',
    remaining: '0',
    surplus: '0',
    token: 'USDC',
    referenceId: 'order-2025-000123',
    email: 'buyer@example.com',
    checkoutUrl: 'https://pay.example.com/checkout/3f1c2a7e-9b4d-4c1e-8a55-1d2e3f4a5b6c',
    expiresAt: '2025-03-01T13:00:00.000Z',
    successUrl: 'https://shop.example.com/checkout/return?orderId=order-2025-000123',
    cancelUrl: 'https://shop.example.com/cart',
    depositAddresses: [
      { networkId: 1, chainName: 'Ethereum', family: 'evm', address: '0x71C7656EC7ab88b098defB751B7401B5f6d8976F', token: 'USDC', chainId: '0d6a3c10-1f2e-4a5b-9c8d-7e6f5a4b3c2d' },
      { networkId: 137, chainName: 'Polygon', family: 'evm', address: '0x8Ba1f109551bD432803012645Ac136ddd64DBA72', token: 'USDC', chainId: '2b7e4d90-3c1a-4f6e-8d5b-9a0c1e2f3a4b' },
      { networkId: 728126428, chainName: 'Tron', family: 'tron', address: 'TXLAQ63Xg1NAzckPwKHvzw7CSEmLMEqcdj', token: 'USDT', chainId: '5e9f1a2b-6c3d-4e7f-8a9b-0c1d2e3f4a5b' },
    ],
    createdAt: '2025-03-01T12:00:00.000Z',
    updatedAt: '2025-03-01T12:07:31.000Z',
  },
}).split(ID_MARK);

const RUN_TAG = randomBytes(4).toString('hex');
let sequence = 0;
function nextBody(): { id: string; body: string } {
  const suffix = `${RUN_TAG}${(sequence++).toString(36).padStart(8, '0')}`;
  return { id: `evt_${suffix}`, body: TEMPLATE.join(suffix) };
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
      [TEMPLATE.join(ID_MARK), PRESTORED],
    );
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => done(null, body));
    app.post(PATH, async (request) => {
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
      [TEMPLATE.join(ID_MARK), PRESTORED],
    );
    const receiver = createReceiver({ store, secrets: SECRET, logger: silentLogger, dispatch: false, retention: false });
    await app.register(checkoutWebhooks, { receiver, lifecycle: false });
  }
  await pool.query(`ANALYZE ${table}`);

  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  return {
    port: typeof address === 'object' && address ? address.port : 0,
    async close() {
      await app.close();
      const { rows } = await pool.query<{ count: number }>(`SELECT count(*)::int AS count FROM ${table}`);
      await pool.query(`DROP SCHEMA "${schema}" CASCADE`);
      await pool.end();
      return rows[0]?.count ?? 0;
    },
  };
}

async function serverMain(databaseUrl: string): Promise<void> {
  const config = JSON.parse(process.env[ROLE_ENV]!) as ServerConfig;
  const send = (message: ChildMessage) => process.send?.(message);
  try {
    const server = await startServer(config, databaseUrl);
    send({ type: 'ready', port: server.port });
    process.on('message', (message) => {
      if (message !== 'close') return;
      void server.close().then(
        (stored) => {
          send({ type: 'closed', stored });
          process.disconnect?.();
        },
        (error: unknown) => send({ type: 'error', message: String(error) }),
      );
    });
  } catch (error) {
    send({ type: 'error', message: error instanceof Error ? (error.stack ?? error.message) : String(error) });
    process.exitCode = 1;
    process.disconnect?.();
  }
}

// ---------------------------------------------------------------------------------------------
// Load side (this process).

function load(port: number, seconds: number): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url: `http://127.0.0.1:${port}${PATH}`,
        connections: CONNECTIONS,
        duration: seconds,
        requests: [
          {
            method: 'POST',
            setupRequest: (request) => {
              const { id, body } = nextBody();
              return { ...request, body, headers: { 'content-type': 'application/json', ...signWebhook({ id: `msg_${id.slice(4)}`, body, secret: SECRET }) } };
            },
          },
        ],
      },
      (error, result) => (error ? reject(error) : resolve(result)),
    );
  });
}

/** A bench server in its own process (its own core), ready to take load. */
async function startChild(scenario: Scenario) {
  const schema = `ck_bench_${scenario}_${randomBytes(4).toString('hex')}`;
  const child = fork(fileURLToPath(import.meta.url), [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, [ROLE_ENV]: JSON.stringify({ scenario, schema } satisfies ServerConfig) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const next = () =>
    new Promise<ChildMessage>((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`bench server "${scenario}" exited (${code}) early`));
      child.once('exit', onExit);
      child.once('message', (message) => {
        child.off('exit', onExit);
        resolve(message as ChildMessage);
      });
    });
  const ready = await next();
  if (ready.type !== 'ready') {
    child.kill();
    throw new Error(`bench server "${scenario}" failed: ${ready.type === 'error' ? ready.message : ready.type}`);
  }
  return {
    port: ready.port,
    async close(): Promise<number | undefined> {
      const closing = next();
      child.send('close');
      const closed = await closing.finally(() => child.exitCode === null && child.kill());
      return closed.type === 'closed' ? closed.stored : undefined;
    },
    kill: () => child.exitCode === null && child.kill(),
  };
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
    for (const server of servers) await load(server.port, WARMUP_SECONDS);
    for (let round = 0; round < ROUNDS; round++) {
      for (const [i, server] of servers.entries()) {
        const result = await load(server.port, ROUND_SECONDS);
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
  void serverMain(DATABASE_URL!);
} else if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  console.table(await run());
}

/**
 * One member of the multi-process test (`postgres-cluster.test.ts`), started as
 * `node --import tsx test/store/postgres/cluster-process.ts '<ClusterProcessArgs JSON>'`:
 *
 * - `receiver`: a real fastify server on 127.0.0.1, port 0, with `createReceiver` and the
 *   `checkoutWebhooks` plugin on a `PostgresStore`, feeding every event to a `FulfillmentEngine`
 *   that decides from the verified event data (`confirm: false`). Prints `{"port":N}` when listening.
 * - `reconciler`: `reconcile()` in a loop, reading payments from the `service_payments` table (the
 *   test's stand-in for the service's Get payment). Prints `{"ready":true}` once started.
 *
 * Every handler call INSERTs a row into `handler_calls` (no unique key), so the test counts calls in
 * the database: who ran it (`owner`, `pid`), and on which claim (`attempt`).
 */
import pg from 'pg';
import Fastify from 'fastify';
import { attachFulfillment, FulfillmentEngine, type FulfillmentHandler, type ResourceReader } from '../../../src/fulfillment/index.js';
import type { Logger } from '../../../src/log/index.js';
import { reconcile } from '../../../src/reconcile/index.js';
import { PaymentSchema } from '../../../src/schemas/index.js';
import { PostgresStore } from '../../../src/store/postgres/index.js';
import { checkoutWebhooks, createReceiver } from '../../../src/webhooks/index.js';
import { listenOnLoopback } from '../../support/ports.js';

export interface ClusterProcessArgs {
  role: 'receiver' | 'reconciler';
  databaseUrl: string;
  schema: string;
  secret: string;
  leaseMs: number;
}

const args = JSON.parse(process.argv[2] ?? '{}') as ClusterProcessArgs;
const say = (message: object) => process.stdout.write(`${JSON.stringify(message)}\n`);

/** Warnings and errors go to stderr, where the test shows them if it fails. */
const logger: Logger = {
  debug() {},
  info() {},
  warn: (obj, msg) => process.stderr.write(`[${args.role} ${process.pid}] warn ${msg ?? ''} ${JSON.stringify(obj)}\n`),
  error: (obj, msg) => process.stderr.write(`[${args.role} ${process.pid}] error ${msg ?? ''} ${JSON.stringify(obj)}\n`),
};

const pool = new pg.Pool({ connectionString: args.databaseUrl, max: args.role === 'receiver' ? 8 : 4 });
const store = new PostgresStore({ pool, schema: args.schema, migrate: false, logger });
await store.open();
const table = (name: string) => `"${args.schema}".${name}`;

let engine: FulfillmentEngine;
// A few milliseconds of "work" first, so that a process always holds some leases when it is killed.
const record: FulfillmentHandler = async (_resource, ctx) => {
  await new Promise((resolve) => setTimeout(resolve, 5 + Math.random() * 30));
  await pool.query(`INSERT INTO ${table('handler_calls')} (key, outcome, source, owner, attempt, pid) VALUES ($1, $2, $3, $4, $5, $6)`, [
    ctx.key,
    ctx.outcome,
    ctx.source,
    engine.owner,
    ctx.attempt,
    process.pid,
  ]);
};
const handlers = { paid: record, overpaid: record, expired: record, underpaid: record };

if (args.role === 'receiver') {
  engine = new FulfillmentEngine({ store, handlers, confirm: false, leaseMs: args.leaseMs, logger });
  const receiver = createReceiver({ store, secrets: args.secret, logger, leaseMs: args.leaseMs, pollIntervalMs: 250, retention: false });
  attachFulfillment(receiver, engine);
  const app = Fastify({ logger: false });
  await app.register(checkoutWebhooks, { receiver });
  say({ port: await listenOnLoopback(app) });
} else {
  const service: ResourceReader = {
    payments: {
      async get(id) {
        const { rows } = await pool.query<{ payment: unknown }>(`SELECT payment FROM ${table('service_payments')} WHERE id = $1`, [id]);
        if (!rows[0]) throw new Error(`service: no payment ${id}`);
        return PaymentSchema.parse(rows[0].payment);
      },
    },
    invoices: {
      get: (id) => Promise.reject(new Error(`service: no invoice ${id}`)),
    },
  };
  engine = new FulfillmentEngine({ store, handlers, client: service, leaseMs: args.leaseMs, logger });
  say({ ready: true });
  for (;;) {
    await reconcile({ store, engine, olderThanMs: 1500, concurrency: 4, lockTtlMs: 5000, logger });
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/**
 * The helper servers of the `serve` benchmarks, each in its own child process (started with
 * `forkServer` from load.ts, on 127.0.0.1 and a random port):
 *
 * - `standin`: a stand-in for the checkout service. `GET /v1/payments/:id` answers a valid Payment
 *   (paid in full), or 404 for every payment (`mode: 'not-found'`), optionally rate limited to
 *   `rps` reads per second (a token bucket with one second of burst, or `limit: 'window'`: fixed
 *   one-second windows of its clock; beyond it 429 with `Retry-After: 1` and the spec's error
 *   object). `GET /stats` counts what it was asked.
 * - `bare`: fastify answering 200 on the webhook route, no work: the ceiling of any receiver.
 * - `receiver`: the receiver with dispatch off (verify, store in the embedded store, acknowledge),
 *   as receiver.bench.ts's `receiver` scenario: what `serve` would acknowledge without its engine.
 */
import { fileURLToPath } from 'node:url';
import { listenOnLoopback } from '../support/ports.js';
import { forkServer, serveInChild, WEBHOOK_PATH, type ChildServer, type ForkedServer } from './load.js';
import { payment } from './serve-payloads.js';

const ROLE_ENV = 'CHECKOUT_KIT_SERVE_BENCH_CHILD';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface StandInConfig {
  kind: 'standin';
  /** `paid`: every payment answered paid in full; `not-found`: every payment answered 404. */
  mode: 'paid' | 'not-found';
  /** Reads per second allowed; unset: unlimited. */
  rps?: number | undefined;
  /**
   * How `rps` is counted: `bucket`, a token bucket with one second of burst; `window`, at most
   * `rps` reads in each whole second of the stand-in's clock (as many services count). @default bucket
   */
  limit?: 'bucket' | 'window' | undefined;
  /** Added latency per answered read, in ms (a remote service is not on loopback). @default 0 */
  delayMs?: number | undefined;
}

export type ChildConfig = StandInConfig | { kind: 'bare' } | { kind: 'receiver'; dir: string; secret: string };

/** What the stand-in counts (`GET /stats`). */
export interface StandInStats {
  /** Get payment requests received (answered or refused). */
  requests: number;
  ok: number;
  notFound: number;
  rateLimited: number;
  /** Distinct payments answered 200 at least once. */
  distinct: number;
  /** `Date.now()` of the last Get payment request, 0 before the first. */
  lastRequestAt: number;
}

// ---------------------------------------------------------------------------------------------
// Child side.

async function start(config: ChildConfig): Promise<ChildServer> {
  const { default: Fastify } = await import('fastify');
  const app = Fastify({ logger: false });
  let closeExtra: () => Promise<number | undefined> = async () => undefined;

  if (config.kind === 'standin') {
    const stats: StandInStats = { requests: 0, ok: 0, notFound: 0, rateLimited: 0, distinct: 0, lastRequestAt: 0 };
    const seen = new Set<string>();
    const rps = config.rps && config.rps > 0 ? config.rps : undefined;
    let tokens = rps ?? 0;
    let refilledAt = performance.now();
    const fromBucket = (limit: number): boolean => {
      const now = performance.now();
      tokens = Math.min(limit, tokens + ((now - refilledAt) / 1000) * limit);
      refilledAt = now;
      if (tokens < 1) return false;
      tokens -= 1;
      return true;
    };
    let window = 0;
    let inWindow = 0;
    const inFixedWindow = (limit: number): boolean => {
      const second = Math.floor(Date.now() / 1000);
      if (second !== window) {
        window = second;
        inWindow = 0;
      }
      inWindow += 1;
      return inWindow <= limit;
    };
    const take = (): boolean => (rps === undefined ? true : config.limit === 'window' ? inFixedWindow(rps) : fromBucket(rps));
    app.get('/v1/payments/:id', async (request, reply) => {
      stats.requests += 1;
      stats.lastRequestAt = Date.now();
      const { id } = request.params as { id: string };
      if (!take()) {
        stats.rateLimited += 1;
        return reply
          .code(429)
          .header('retry-after', '1')
          .send({ error: { code: 'rate_limited', message: `More than ${rps} reads per second: retry after 1 s.` } });
      }
      if (config.delayMs) await new Promise((resolve) => setTimeout(resolve, config.delayMs));
      if (config.mode === 'not-found' || !UUID.test(id)) {
        stats.notFound += 1;
        return reply.code(404).send({ error: { code: 'not_found', message: `No payment ${id}.` } });
      }
      stats.ok += 1;
      if (!seen.has(id)) {
        seen.add(id);
        stats.distinct += 1;
      }
      return reply.header('content-type', 'application/json; charset=utf-8').send(JSON.stringify(payment(id, 'paid')));
    });
    app.get('/v1/invoices/:id', async (request, reply) =>
      reply.code(404).send({ error: { code: 'not_found', message: `No invoice ${(request.params as { id: string }).id}.` } }),
    );
    app.get('/stats', async () => stats);
    closeExtra = async () => stats.requests;
  } else if (config.kind === 'bare') {
    app.post(WEBHOOK_PATH, async () => ({ received: true }));
  } else {
    const { SqliteStore } = await import('../../src/store/index.js');
    const { silentLogger } = await import('../../src/log/index.js');
    const { checkoutWebhooks, createReceiver } = await import('../../src/webhooks/index.js');
    const store = new SqliteStore({ dir: config.dir });
    await store.open();
    // Store and acknowledge only: `serve` without its engine.
    const receiver = createReceiver({ store, secrets: config.secret, logger: silentLogger, dispatch: false, retention: false });
    await app.register(checkoutWebhooks, { receiver, lifecycle: false });
    closeExtra = async () => {
      const pending = (await store.listRuns({ kind: 'event', status: 'pending', limit: Number.MAX_SAFE_INTEGER })).length;
      await store.close();
      return pending;
    };
  }

  const port = await listenOnLoopback(app);
  return {
    port,
    async close() {
      await app.close();
      return closeExtra();
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Parent side.

/** Start a helper server in a child process; `close()` answers the stand-in's request count or the receiver's stored events. */
export function startChild(config: ChildConfig): Promise<ForkedServer> {
  return forkServer({ module: import.meta.url, roleEnv: ROLE_ENV, config, name: config.kind });
}

/** The stand-in's counters now. */
export async function standInStats(port: number): Promise<StandInStats> {
  const response = await fetch(`http://127.0.0.1:${port}/stats`, { signal: AbortSignal.timeout(10_000) });
  return (await response.json()) as StandInStats;
}

if (process.env[ROLE_ENV] && process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  void serveInChild<ChildConfig>(ROLE_ENV, start);
}

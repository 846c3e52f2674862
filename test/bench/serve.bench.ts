/**
 * The whole `checkout-kit serve` as merchants run it: receiver + fulfillment engine. Every stored
 * event is dispatched; the engine confirms it with Get payment against the service (a stand-in
 * in its own process), classifies, stores and runs the handler once.
 *
 * Load: autocannon, 50 connections, every request a distinct signed ~1.2 KB `payment.paid` event
 * for a distinct payment, windows of 5 s after 1 s of warm-up. Bare fastify (a child answering 200
 * on the same route) and serve with the service answering every payment paid alternate for 3
 * rounds, serve's dispatch backlog drained after each of its windows; the round with the median
 * serve/bare ratio is reported (this 2-core machine is shared and noisy). Then one window with
 * the service answering 404 for every payment (events for payments it does not know).
 *
 * Reported: events acknowledged per second, Get payment reads per second the stand-in saw over the
 * same window, ack p50/p99 (autocannon), serve's CPU over the window (user + system time of all
 * its threads from /proc/<pid>/stat over wall time, single-core basis: 100% = one core busy;
 * idle = 1 − that, negative when GC and libuv threads add up to more than one core), how long the
 * backlog took to drain after the window, and serve's peak RSS.
 *
 * `serve` uses the embedded store; `serve-postgres` (serve-postgres.bench.ts) the same on PostgreSQL.
 *
 * Run alone: `node --import tsx test/bench/run.ts serve`.
 * Env: BENCH_SERVE_SECONDS (5), BENCH_SERVE_WARMUP_SECONDS (1), BENCH_SERVE_ROUNDS (3), BENCH_SERVE_DRAIN_SECONDS (60: how
 * long to wait after the load for the handlers), BENCH_STANDIN_DELAY_MS (0), and CHECKOUT_MAX_RPS /
 * CHECKOUT_DISPATCH_CONCURRENCY (passed on to serve).
 */
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import type autocannon from 'autocannon';
import type { ForkedServer } from './load.js';
import { startChild, standInStats } from './serve-children.js';
import {
  checkPostgres,
  cpuSeconds,
  DEFAULT_DATABASE_URL,
  deliver,
  dropSchema,
  envNumber,
  failures,
  fmt,
  sleep,
  startServe,
  type ServeProcess,
  watchPeak,
  withSchema,
  type BenchResult,
} from './serve-harness.js';
import { distinctPaidEvents } from './serve-payloads.js';

const WARMUP_SECONDS = envNumber('BENCH_SERVE_WARMUP_SECONDS', 1);
const SECONDS = envNumber('BENCH_SERVE_SECONDS', 5);
const DRAIN_SECONDS = envNumber('BENCH_SERVE_DRAIN_SECONDS', 60);
const ROUNDS = Math.round(envNumber('BENCH_SERVE_ROUNDS', 3));
const STANDIN_DELAY_MS = envNumber('BENCH_STANDIN_DELAY_MS', 0);

interface Window {
  result: autocannon.Result;
  /** Get payment requests the stand-in received during the window. */
  reads: number;
  wallSeconds: number;
  /** CPU seconds of serve per wall second over the window (1 = one core busy). */
  cpuShare: number;
}

/** Load on a server for `seconds`, with the stand-in's reads and the server's CPU over the same window. */
async function window(port: number, next: () => { msgId: string; body: string }, seconds: number, pid?: number, standinPort?: number): Promise<Window> {
  const before = standinPort === undefined ? undefined : await standInStats(standinPort);
  const cpuBefore = pid === undefined ? undefined : cpuSeconds(pid);
  const started = performance.now();
  const result = await deliver({ port, next, seconds });
  const wallSeconds = (performance.now() - started) / 1000;
  const cpuAfter = pid === undefined ? undefined : cpuSeconds(pid);
  const after = standinPort === undefined ? undefined : await standInStats(standinPort);
  return {
    result,
    reads: before && after ? after.requests - before.requests : 0,
    wallSeconds,
    cpuShare: cpuBefore !== undefined && cpuAfter !== undefined ? (cpuAfter - cpuBefore) / wallSeconds : NaN,
  };
}

/** serve and its stand-in, kept up across rounds. */
class ServeSession {
  /** Events serve acknowledged so far (warm-up included): each is a payment whose handler must run once. */
  acked = 0;
  readonly next = distinctPaidEvents();
  private constructor(
    readonly standin: ForkedServer,
    readonly serve: ServeProcess,
    private readonly peak: ReturnType<typeof watchPeak>,
  ) {}

  static async start(mode: 'paid' | 'not-found', store: string): Promise<ServeSession> {
    const standin = await startChild({ kind: 'standin', mode, delayMs: STANDIN_DELAY_MS });
    try {
      const serve = await startServe({ servicePort: standin.port, store });
      return new ServeSession(standin, serve, watchPeak(serve.pid));
    } catch (error) {
      await ServeSession.closeStandIn(standin);
      throw error;
    }
  }

  async window(seconds: number): Promise<Window> {
    const measured = await window(this.serve.port, this.next, seconds, this.serve.pid, this.standin.port);
    this.acked += measured.result['2xx'];
    return measured;
  }

  /** Wait until every acknowledged event's handler has run (at most DRAIN_SECONDS). */
  async drain(): Promise<{ done: number; before: number; acked: number; seconds: number; complete: boolean }> {
    const started = performance.now();
    const before = (await this.serve.handlerCalls()).total;
    let done = before;
    while (done < this.acked && performance.now() - started < DRAIN_SECONDS * 1000) {
      await sleep(250);
      done = (await this.serve.handlerCalls()).total;
    }
    return { done, before, acked: this.acked, seconds: (performance.now() - started) / 1000, complete: done >= this.acked };
  }

  /** Stop both; what serve's run came to. */
  async finish(): Promise<{ peakMb: number; log: string; stop: string }> {
    const peakMb = this.peak.stop();
    const summary = await this.serve.logSummary();
    const log =
      summary.warnings + summary.errors > 0
        ? `serve logged ${fmt(summary.warnings)} warnings, ${fmt(summary.errors)} errors: ${summary.top.join('; ')}`
        : 'serve logged no warnings';
    const { graceful } = await this.serve.stop();
    await ServeSession.closeStandIn(this.standin);
    return { peakMb, log, stop: graceful ? '' : 'serve did not exit within 10 s of SIGTERM (killed)' };
  }

  /** For `finally`: stop both, whatever state they are in. */
  async kill(): Promise<void> {
    this.peak.stop();
    await this.serve.stop(2000).catch(() => undefined);
    await ServeSession.closeStandIn(this.standin);
  }

  private static async closeStandIn(standin: ForkedServer): Promise<void> {
    await standin.close().catch(() => undefined);
    standin.kill();
  }
}

const rate = (result: autocannon.Result) => result['2xx'] / result.duration;
const cpuNote = (share: number) =>
  Number.isFinite(share) ? `serve CPU ${fmt(share * 100)}% of one core (idle ${fmt((1 - share) * 100)}%, single-core basis)` : 'serve CPU not read';
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/**
 * The suite on one store. Bare fastify and serve (service answering paid) alternate for ROUNDS
 * rounds of SECONDS each, serve draining its dispatch backlog after each of its rounds (so that
 * neither window carries the other's work); the round with the median serve/bare ratio is
 * reported. Then serve against a service answering 404 for every payment, one window.
 */
export async function runOn(kind: 'file' | 'postgres'): Promise<BenchResult[]> {
  const databaseUrl = process.env.DATABASE_URL || DEFAULT_DATABASE_URL;
  if (kind === 'postgres') await checkPostgres(databaseUrl);
  const label = kind === 'file' ? 'serve (embedded store)' : 'serve (PostgreSQL)';
  const schemas: string[] = [];
  const storeFor = () => {
    if (kind === 'file') return 'file';
    const schema = `ck_bench_serve_${randomBytes(4).toString('hex')}`;
    schemas.push(schema);
    return withSchema(databaseUrl, schema);
  };

  const results: BenchResult[] = [];
  let bareRate = NaN;
  let bare: ForkedServer | undefined;
  let session: ServeSession | undefined;
  try {
    // Paid: rounds against bare fastify.
    bare = await startChild({ kind: 'bare' });
    session = await ServeSession.start('paid', storeFor());
    const bareNext = distinctPaidEvents();
    await deliver({ port: bare.port, next: bareNext, seconds: WARMUP_SECONDS });
    await session.window(WARMUP_SECONDS);
    await session.drain();
    const rounds: Array<{ bare: Window; serve: Window; drain: Awaited<ReturnType<ServeSession['drain']>> }> = [];
    for (let round = 0; round < ROUNDS; round++) {
      const bareWindow = await window(bare.port, bareNext, SECONDS);
      const serveWindow = await session.window(SECONDS);
      rounds.push({ bare: bareWindow, serve: serveWindow, drain: await session.drain() });
    }
    await bare.close().catch(() => undefined);
    bare.kill();
    bare = undefined;
    const paidEnd = await session.finish();
    session = undefined;

    const ratios = rounds.map((r) => rate(r.serve.result) / rate(r.bare.result));
    const middle = rounds[ratios.indexOf(median(ratios))]!;
    bareRate = rate(middle.bare.result);
    const { serve, drain } = middle;
    const serveRate = rate(serve.result);
    const roundsNote = ROUNDS > 1 ? `round with the median ratio of ${ROUNDS} (${ratios.map((r) => r.toFixed(2)).join(', ')})` : '';
    results.push(
      {
        name: `fastify bare route (200, no work), same load (${kind === 'file' ? 'serve' : 'serve-postgres'} run)`,
        eventsPerSec: bareRate,
        note: [`p50 ${middle.bare.result.latency.p50} ms, p99 ${middle.bare.result.latency.p99} ms`, ...failures(middle.bare.result), roundsNote]
          .filter(Boolean)
          .join('; '),
      },
      {
        name: `${label}, service answers paid: events acknowledged`,
        eventsPerSec: serveRate,
        note: [
          `**${(serveRate / bareRate).toFixed(2)}× bare fastify**`,
          `ack p50 ${serve.result.latency.p50} ms, p99 ${serve.result.latency.p99} ms`,
          cpuNote(serve.cpuShare),
          ...failures(serve.result),
          roundsNote,
        ]
          .filter(Boolean)
          .join('; '),
      },
      {
        name: `${label}, service answers paid: Get payment reads during the load`,
        eventsPerSec: serve.reads / serve.wallSeconds,
        note: [
          `${fmt(serve.reads)} reads for ${fmt(serve.result['2xx'])} events acknowledged in the same ${fmt(serve.wallSeconds, 1)} s (${(serve.reads / Math.max(1, serve.result['2xx'])).toFixed(2)} per event)`,
          drain.complete
            ? `backlog: every handler done ${fmt(drain.seconds, 1)} s after the load`
            : `**backlog: ${fmt(drain.acked - drain.done)} of ${fmt(drain.acked)} acknowledged events still without their handler ${fmt(DRAIN_SECONDS)} s after the load**`,
          `handlers completed per second after each round's load: ${rounds.map((r) => fmt((r.drain.done - r.drain.before) / Math.max(0.001, r.drain.seconds))).join(', ')}`,
          `peak RSS ${fmt(paidEnd.peakMb)} MB`,
          paidEnd.log,
          paidEnd.stop,
        ]
          .filter(Boolean)
          .join('; '),
      },
    );
  } catch (error) {
    results.push({ name: `${label}, service answers paid`, eventsPerSec: 0, note: `failed: ${(error as Error).message.split('\n')[0]}` });
  } finally {
    if (bare) {
      await bare.close().catch(() => undefined);
      bare.kill();
    }
    await session?.kill();
  }

  // 404: one window (its failed dispatches are retried with backoff for minutes: no drain).
  try {
    session = await ServeSession.start('not-found', storeFor());
    await session.window(WARMUP_SECONDS);
    const measured = await session.window(SECONDS);
    await sleep(2000);
    const later = await standInStats(session.standin.port);
    const acked = session.acked;
    const end = await session.finish();
    session = undefined;
    const serveRate = rate(measured.result);
    results.push(
      {
        name: `${label}, service answers 404: events acknowledged`,
        eventsPerSec: serveRate,
        note: [
          Number.isFinite(bareRate) ? `**${(serveRate / bareRate).toFixed(2)}× bare fastify** (its median round above)` : '',
          `ack p50 ${measured.result.latency.p50} ms, p99 ${measured.result.latency.p99} ms`,
          cpuNote(measured.cpuShare),
          ...failures(measured.result),
        ]
          .filter(Boolean)
          .join('; '),
      },
      {
        name: `${label}, service answers 404: Get payment reads during the load`,
        eventsPerSec: measured.reads / measured.wallSeconds,
        note: [
          `${fmt(measured.reads)} reads for ${fmt(measured.result['2xx'])} events acknowledged in the same ${fmt(measured.wallSeconds, 1)} s (${(measured.reads / Math.max(1, measured.result['2xx'])).toFixed(2)} per event)`,
          `${fmt(later.requests)} reads in all by 2 s after the load, for ${fmt(acked)} events acknowledged (warm-up included)`,
          `peak RSS ${fmt(end.peakMb)} MB`,
          end.log,
          end.stop,
        ]
          .filter(Boolean)
          .join('; '),
      },
    );
  } catch (error) {
    results.push({ name: `${label}, service answers 404`, eventsPerSec: 0, note: `failed: ${(error as Error).message.split('\n')[0]}` });
  } finally {
    await session?.kill();
    for (const schema of schemas) await dropSchema(databaseUrl, schema).catch(() => undefined);
  }
  return results;
}

export function run(): Promise<BenchResult[]> {
  return runOn('file');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  console.table(await run());
}

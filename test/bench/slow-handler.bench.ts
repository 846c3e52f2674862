/**
 * A slow fulfillment handler under steady traffic: the whole `checkout-kit serve` (embedded
 * store, stand-in service answering every payment paid, unlimited), its paid handler sleeping 5 s,
 * deliveries at 500 per second for 60 s on 50 connections, each a distinct signed `payment.paid`
 * event for a distinct payment. Two load generators, each against a fresh serve: evenly paced (one
 * delivery every 2 ms, as a provider sending steadily would) and autocannon's `overallRate`, which
 * sends each connection's share of a second back to back at the start of the second (the whole
 * second's deliveries as one burst).
 *
 * Measured: the rate actually acknowledged, ack p50/p99 (the load generator's, and serve's own
 * from its `/metrics` ack histogram, to tell time in serve from time around it), both processes'
 * event-loop delay, and serve's RSS (with V8's heap, by space, from its `/metrics`) read every 5 s. Whether memory levels off: the RSS at the first minute (or halfway, for runs of 2 minutes or less) is
 * compared with the last reading; "steady" when the last is within 10% of it. Also how many
 * handlers completed during the run (steady state: rate × (run − 5 s)).
 *
 * Run alone: `node --import tsx test/bench/run.ts slow-handler`.
 * Env: BENCH_SLOW_LOAD (`paced`, `autocannon`; both by default), BENCH_SLOW_SECONDS (60),
 * BENCH_SLOW_RATE (500), BENCH_SLOW_HANDLER_MS (5000), BENCH_SLOW_SAMPLE_SECONDS (5), BENCH_SLOW_STORE (`file`, the
 * embedded SQLite store, or `postgres`), and CHECKOUT_MAX_RPS / CHECKOUT_DISPATCH_CONCURRENCY (passed on to serve).
 * The control (how much of the growth is history, not backlog): BENCH_SLOW_HANDLER_MS=1
 * CHECKOUT_MAX_RPS=2000, where every event is fulfilled instead of waiting.
 *
 * Side by side: BENCH_SLOW_BASELINE_CLI=<another build's dist/cli/main.js> (BENCH_SLOW_BASELINE_NAME:
 * `baseline`) runs that serve too, BENCH_SLOW_ROUNDS (1) times each, interleaved with this build's
 * and in alternating order, each on a fresh folder, against the same stand-in service: compare the
 * two within one run, since the machine's load moves the absolute figures from run to run.
 * BENCH_SLOW_LIVE_HEAP=1: what serve holds, not what V8 has yet to collect: a heap snapshot (it
 * collects first) halfway and one at the end of the load, each summed (the halfway one costs that
 * moment's latency a full collection and the file's writing).
 */
import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { startChild, standInStats } from './serve-children.js';
import { randomBytes } from 'node:crypto';
import {
  checkPostgres,
  DEFAULT_DATABASE_URL,
  deliver,
  dropSchema,
  envNumber,
  failures,
  fmt,
  memoryMb,
  pacedDeliver,
  startServe,
  withSchema,
  type BenchResult,
} from './serve-harness.js';
import { distinctPaidEvents } from './serve-payloads.js';
import { DEFAULT_MAX_RPS } from '../../src/client/rate-limiter.js';
import { DEFAULT_DISPATCH_CONCURRENCY } from '../../src/webhooks/receive/receiver-options.js';

const SECONDS = Math.round(envNumber('BENCH_SLOW_SECONDS', 60));
const RATE = Math.round(envNumber('BENCH_SLOW_RATE', 500));
const HANDLER_MS = envNumber('BENCH_SLOW_HANDLER_MS', 5000);
const SAMPLE_SECONDS = envNumber('BENCH_SLOW_SAMPLE_SECONDS', 5);
/** `file` (default: the embedded SQLite store) or `postgres` (DATABASE_URL, a fresh schema). */
const STORE = process.env.BENCH_SLOW_STORE === 'postgres' ? 'postgres' : 'file';
type Load = 'paced' | 'autocannon';
/** `paced`, `autocannon`, or both (default), each on a fresh serve. */
const LOADS: Load[] =
  process.env.BENCH_SLOW_LOAD === 'paced' ? ['paced'] : process.env.BENCH_SLOW_LOAD === 'autocannon' ? ['autocannon'] : ['paced', 'autocannon'];
const LOAD_LABEL: Record<Load, string> = {
  paced: 'evenly paced (one delivery every 2 ms at 500/s)',
  autocannon: "autocannon overallRate (each connection's share of a second sent back to back at its start)",
};

/** What bounds dispatch: serve's slots (each held a handler's time) and its read rate, as serve is given them. */
const CONCURRENCY = envNumber('CHECKOUT_DISPATCH_CONCURRENCY', DEFAULT_DISPATCH_CONCURRENCY);
const MAX_RPS = envNumber('CHECKOUT_MAX_RPS', DEFAULT_MAX_RPS);
const DISPATCH_BOUND = `${CONCURRENCY} dispatch slots × ${fmt(HANDLER_MS / 1000, 1)} s handlers, ${MAX_RPS} reads/s, one read per event`;

/** Handlers that can complete during the run: events arrive at `rate`, each needs a read and a slot for a handler's time. */
function completionCeiling(rate: number): number {
  const perSecond = Math.min(rate, MAX_RPS, HANDLER_MS > 0 ? (CONCURRENCY * 1000) / HANDLER_MS : Number.POSITIVE_INFINITY);
  return Math.max(0, perSecond * (SECONDS - HANDLER_MS / 1000));
}

const ROUNDS = Math.max(1, Math.round(envNumber('BENCH_SLOW_ROUNDS', 1)));
const LIVE_HEAP = Boolean(process.env.BENCH_SLOW_LIVE_HEAP);
interface Side {
  /** In row names: `this build`, or the baseline's name. */
  name: string;
  /** The serve to run: a built `dist/cli/main.js`; undefined: this checkout's, built. */
  cli: string | undefined;
}
const SIDES: Side[] = [
  { name: 'this build', cli: undefined },
  ...(process.env.BENCH_SLOW_BASELINE_CLI ? [{ name: process.env.BENCH_SLOW_BASELINE_NAME || 'baseline', cli: process.env.BENCH_SLOW_BASELINE_CLI }] : []),
];

export async function run(): Promise<BenchResult[]> {
  const rows: BenchResult[] = [];
  for (const load of LOADS) {
    for (let round = 1; round <= ROUNDS; round++) {
      // Alternate which side goes first, so that neither always runs on the machine the other left.
      const order = round % 2 === 1 ? SIDES : [...SIDES].reverse();
      for (const side of order) rows.push(...(await measure(load, side, SIDES.length > 1 || ROUNDS > 1 ? ` [${side.name}, round ${round}]` : '')));
    }
  }
  return rows;
}

/**
 * The live heap of `pid` (MB): the sum of a heap snapshot's objects. serve runs with
 * `--heapsnapshot-signal=SIGUSR2` (`startServe`'s `heapSnapshotSignal`); V8 collects before it writes the file.
 */
async function liveHeapMb(pid: number, dir: string): Promise<number | undefined> {
  const before = new Set(await readdir(dir));
  process.kill(pid, 'SIGUSR2');
  for (const deadline = performance.now() + 60_000; performance.now() < deadline;) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    const file = (await readdir(dir)).find((name) => name.endsWith('.heapsnapshot') && !before.has(name));
    if (!file) continue;
    let snapshot: { snapshot: { meta: { node_fields: string[] } }; nodes: number[] };
    try {
      snapshot = JSON.parse(await readFile(join(dir, file), 'utf8'));
    } catch {
      continue; // still being written
    }
    await rm(join(dir, file), { force: true });
    const fields = snapshot.snapshot.meta.node_fields;
    const size = fields.indexOf('self_size');
    let total = 0;
    for (let i = size; i < snapshot.nodes.length; i += fields.length) total += snapshot.nodes[i]!;
    return total / 1e6;
  }
  return undefined;
}

/** Acknowledged, the rate, and the client's latency quantiles, whichever load generator sent them. */
async function sendLoad(load: Load, port: number) {
  if (load === 'paced') {
    const paced = await pacedDeliver({ port, next: distinctPaidEvents(), seconds: SECONDS, rate: RATE, windowSeconds: SAMPLE_SECONDS });
    return {
      acknowledged: paced.answered - paced.non2xx,
      rate: (paced.answered - paced.non2xx) / SECONDS,
      latency: `ack p50 ${paced.p50} ms, **p99 ${paced.p99} ms**, p99.9 ${paced.p999} ms, max ${paced.max} ms; p99 of each ${fmt(SAMPLE_SECONDS, 1)} s sent: ${paced.windowP99.join(', ')} ms`,
      problems: failures(paced),
    };
  }
  const result = await deliver({ port, next: distinctPaidEvents(), seconds: SECONDS, overallRate: RATE });
  return {
    acknowledged: result['2xx'],
    rate: result['2xx'] / result.duration,
    latency: `ack p50 ${result.latency.p50} ms, **p99 ${result.latency.p99} ms**, max ${result.latency.max} ms`,
    problems: failures(result),
  };
}

async function measure(load: Load, side: Side, suffix: string): Promise<BenchResult[]> {
  const databaseUrl = process.env.DATABASE_URL || DEFAULT_DATABASE_URL;
  const schema = STORE === 'postgres' ? `ck_bench_slow_${randomBytes(4).toString('hex')}` : undefined;
  if (schema) await checkPostgres(databaseUrl);
  const standin = await startChild({ kind: 'standin', mode: 'paid' });
  let serve: Awaited<ReturnType<typeof startServe>> | undefined;
  try {
    serve = await startServe({
      servicePort: standin.port,
      store: schema ? withSchema(databaseUrl, schema) : 'file',
      handlerSleepMs: HANDLER_MS,
      heapSnapshotSignal: LIVE_HEAP,
      ...(side.cli ? { cli: side.cli } : {}),
    });
    const pid = serve.pid;
    const live: number[] = [];
    let halfwayHeap: Promise<number | undefined> | undefined;
    const halfway = LIVE_HEAP ? setTimeout(() => (halfwayHeap = liveHeapMb(pid, serve!.dir).catch(() => undefined)), (SECONDS * 1000) / 2) : undefined;
    const samples: Array<{ at: number; rss: number }> = [];
    // V8's heap beside the RSS: how much of the RSS growth is the heap, and of that how much is live.
    const heaps: Array<{ used: number; total: number; newTotal: number; oldUsed: number; oldTotal: number; largeUsed: number }> = [];
    const started = performance.now();
    const timer = setInterval(() => {
      const memory = memoryMb(pid);
      if (memory) samples.push({ at: (performance.now() - started) / 1000, rss: memory.rss });
      void serve?.heapMb().then((heap) => heap && heaps.push(heap));
    }, SAMPLE_SECONDS * 1000);
    // The load generator's own event-loop delay: a late loop here is latency the client counts.
    const generatorLag = monitorEventLoopDelay({ resolution: 10 });
    generatorLag.enable();
    let result;
    try {
      result = await sendLoad(load, serve.port);
    } finally {
      clearInterval(timer);
      clearTimeout(halfway);
      generatorLag.disable();
    }
    const last = memoryMb(pid);
    if (LIVE_HEAP) {
      // In order: the halfway one (if it was taken), then the end's.
      for (const mb of [await halfwayHeap, await liveHeapMb(pid, serve.dir).catch(() => undefined)]) if (mb !== undefined) live.push(mb);
    }
    if (last) samples.push({ at: (performance.now() - started) / 1000, rss: last.rss });
    const calls = (await serve.handlerCalls()).total;
    const reads = (await standInStats(standin.port)).requests;
    const summary = await serve.logSummary();
    const own = await serve.ackQuantiles();
    const { graceful } = await serve.stop();
    serve = undefined;

    const firstAt = SECONDS > 120 ? 60 : SECONDS / 2;
    const first = samples.find((sample) => sample.at >= firstAt - SAMPLE_SECONDS / 2) ?? samples[0];
    const final = samples.at(-1);
    const steady = first && final ? Math.abs(final.rss - first.rss) <= 0.1 * first.rss : false;
    const series = samples.map((sample) => fmt(sample.rss)).join(', ');
    const name = `slow handler (${fmt(HANDLER_MS / 1000, 1)} s), ${fmt(RATE)} deliveries/s for ${fmt(SECONDS)} s, serve${STORE === 'postgres' ? ' (PostgreSQL)' : ''}, ${LOAD_LABEL[load]}${suffix}`;
    return [
      {
        name: `${name}: acknowledged`,
        eventsPerSec: result.rate,
        note: [
          `${fmt(result.acknowledged)} acknowledged (asked ${fmt(RATE)}/s)`,
          result.latency,
          // Where the time goes: what serve itself took to answer (verify and store), by its /metrics.
          own
            ? `serve's own ack time (its histogram, ${fmt(own.count)} answers): p50 ≤ ${fmt(own.p50AtMostMs, 1)} ms, p99 ≤ ${fmt(own.p99AtMostMs, 1)} ms; its event-loop delay p99 ${fmt(own.loopLagP99Ms ?? NaN, 1)} ms, max ${fmt(own.loopLagMaxMs ?? NaN, 1)} ms`
            : "serve's ack histogram unavailable",
          `the load generator's event-loop delay p99 ${fmt(generatorLag.percentile(99) / 1e6, 1)} ms, max ${fmt(generatorLag.max / 1e6, 1)} ms`,
          ...result.problems,
          `${fmt(calls)} handlers completed and ${fmt(reads)} Get payment reads by the end (dispatch's ceiling ~${fmt(completionCeiling(result.rate))}: ${DISPATCH_BOUND})`,
          summary.warnings + summary.errors > 0
            ? `serve logged ${fmt(summary.warnings)} warnings, ${fmt(summary.errors)} errors: ${summary.top.join('; ')}`
            : '',
          graceful ? '' : 'serve did not exit within 10 s of SIGTERM (killed)',
        ]
          .filter(Boolean)
          .join('; '),
      },
      {
        name: `${name}: RSS (MB)`,
        eventsPerSec: final?.rss ?? 0,
        note: [
          first && final
            ? `**${fmt(first.rss)} MB at ${fmt(first.at)} s → ${fmt(final.rss)} MB at ${fmt(final.at)} s: ${steady ? 'within' : 'NOT within'} 10%** (${fmt((100 * (final.rss - first.rss)) / first.rss)}%)`
            : 'no RSS readings',
          `every ${fmt(SAMPLE_SECONDS)} s: ${series}`,
          live.length === 2 ? `live heap (heap snapshots) ${fmt(live[0]!, 1)} MB halfway → ${fmt(live[1]!, 1)} MB at the end` : '',
          heaps.length > 0 ? `V8 heap used / total (MB), same readings: ${heaps.map((heap) => `${fmt(heap.used)}/${fmt(heap.total)}`).join(', ')}` : '',
          heaps.length > 0
            ? `of which old space used / total, new space total and large objects (MB): ${heaps.map((heap) => `${fmt(heap.oldUsed)}/${fmt(heap.oldTotal)}+${fmt(heap.newTotal)}+${fmt(heap.largeUsed)}`).join(', ')}`
            : '',
          '"per second" column: last RSS in MB',
        ]
          .filter(Boolean)
          .join('; '),
      },
    ];
  } finally {
    await serve?.stop(2000).catch(() => undefined);
    await standin.close().catch(() => undefined);
    standin.kill();
    if (schema) await dropSchema(databaseUrl, schema).catch(() => undefined);
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  console.table(await run());
}

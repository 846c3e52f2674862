/**
 * A slow fulfillment handler under steady traffic: the whole `checkout-kit serve` (embedded
 * store, stand-in service answering every payment paid, unlimited), its paid handler sleeping 5 s,
 * deliveries at a fixed 500 per second (autocannon `overallRate`, 50 connections) for 60 s, each a
 * distinct signed `payment.paid` event for a distinct payment.
 *
 * Measured: the rate actually acknowledged, ack p50/p99 (autocannon's, and serve's own from its
 * `/metrics` ack histogram, to tell time in serve from time around it), and serve's RSS read every 5 s. Whether
 * memory levels off: the RSS at the first minute (or halfway, for runs of 2 minutes or less) is
 * compared with the last reading; "steady" when the last is within 10% of it. Also how many
 * handlers completed during the run (steady state: rate × (run − 5 s)).
 *
 * Run alone: `node --import tsx test/bench/run.ts slow-handler`.
 * Env: BENCH_SLOW_SECONDS (60), BENCH_SLOW_RATE (500), BENCH_SLOW_HANDLER_MS (5000),
 * BENCH_SLOW_SAMPLE_SECONDS (5), BENCH_SLOW_STORE (`file`, or `postgres` to keep the stored backlog
 * out of serve's memory: the embedded store holds every event in memory, so its RSS grows with
 * them whatever else happens), and CHECKOUT_MAX_RPS / CHECKOUT_DISPATCH_CONCURRENCY (passed on to serve).
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { startChild, standInStats } from './serve-children.js';
import { randomBytes } from 'node:crypto';
import { checkPostgres, DEFAULT_DATABASE_URL, deliver, dropSchema, envNumber, failures, fmt, memoryMb, startServe, withSchema, type BenchResult } from './serve-harness.js';
import { distinctPaidEvents } from './serve-payloads.js';

const SECONDS = Math.round(envNumber('BENCH_SLOW_SECONDS', 60));
const RATE = Math.round(envNumber('BENCH_SLOW_RATE', 500));
const HANDLER_MS = envNumber('BENCH_SLOW_HANDLER_MS', 5000);
const SAMPLE_SECONDS = envNumber('BENCH_SLOW_SAMPLE_SECONDS', 5);
/** `file` (default) or `postgres` (DATABASE_URL, a fresh schema): the embedded store keeps every event in memory, PostgreSQL does not. */
const STORE = process.env.BENCH_SLOW_STORE === 'postgres' ? 'postgres' : 'file';

export async function run(): Promise<BenchResult[]> {
  const databaseUrl = process.env.DATABASE_URL || DEFAULT_DATABASE_URL;
  const schema = STORE === 'postgres' ? `ck_bench_slow_${randomBytes(4).toString('hex')}` : undefined;
  if (schema) await checkPostgres(databaseUrl);
  const standin = await startChild({ kind: 'standin', mode: 'paid' });
  let serve: Awaited<ReturnType<typeof startServe>> | undefined;
  try {
    serve = await startServe({ servicePort: standin.port, store: schema ? withSchema(databaseUrl, schema) : 'file', handlerSleepMs: HANDLER_MS });
    const pid = serve.pid;
    const samples: Array<{ at: number; rss: number }> = [];
    const started = performance.now();
    const timer = setInterval(() => {
      const memory = memoryMb(pid);
      if (memory) samples.push({ at: (performance.now() - started) / 1000, rss: memory.rss });
    }, SAMPLE_SECONDS * 1000);
    // The load generator's own event-loop delay: a late loop here is latency autocannon counts.
    const generatorLag = monitorEventLoopDelay({ resolution: 10 });
    generatorLag.enable();
    let result;
    try {
      result = await deliver({ port: serve.port, next: distinctPaidEvents(), seconds: SECONDS, overallRate: RATE });
    } finally {
      clearInterval(timer);
      generatorLag.disable();
    }
    const last = memoryMb(pid);
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
    const rate = result['2xx'] / result.duration;
    const steady = first && final ? Math.abs(final.rss - first.rss) <= 0.1 * first.rss : false;
    const series = samples.map((sample) => fmt(sample.rss)).join(', ');
    return [
      {
        name: `slow handler (${fmt(HANDLER_MS / 1000, 1)} s), ${fmt(RATE)} deliveries/s for ${fmt(SECONDS)} s, serve${STORE === 'postgres' ? ' (PostgreSQL)' : ''}: acknowledged`,
        eventsPerSec: rate,
        note: [
          `${fmt(result['2xx'])} acknowledged (asked ${fmt(RATE)}/s)`,
          `ack p50 ${result.latency.p50} ms, **p99 ${result.latency.p99} ms**`,
          // Where the time goes: what serve itself took to answer (verify and store), by its /metrics.
          own ? `serve's own ack time (its histogram, ${fmt(own.count)} answers): p50 ≤ ${fmt(own.p50AtMostMs, 1)} ms, p99 ≤ ${fmt(own.p99AtMostMs, 1)} ms; its event-loop delay p99 ${fmt(own.loopLagP99Ms ?? NaN, 1)} ms, max ${fmt(own.loopLagMaxMs ?? NaN, 1)} ms` : "serve's ack histogram unavailable",
          `the load generator's event-loop delay p99 ${fmt(generatorLag.percentile(99) / 1e6, 1)} ms, max ${fmt(generatorLag.max / 1e6, 1)} ms`,
          ...failures(result),
          `${fmt(calls)} handlers completed and ${fmt(reads)} Get payment reads by the end (steady state would be ~${fmt(Math.max(0, rate * (SECONDS - HANDLER_MS / 1000)))} completed)`,
          summary.warnings + summary.errors > 0 ? `serve logged ${fmt(summary.warnings)} warnings, ${fmt(summary.errors)} errors: ${summary.top.join('; ')}` : '',
          graceful ? '' : 'serve did not exit within 10 s of SIGTERM (killed)',
        ]
          .filter(Boolean)
          .join('; '),
      },
      {
        name: `slow handler (${fmt(HANDLER_MS / 1000, 1)} s), ${fmt(RATE)} deliveries/s for ${fmt(SECONDS)} s, serve${STORE === 'postgres' ? ' (PostgreSQL)' : ''}: RSS (MB)`,
        eventsPerSec: final?.rss ?? 0,
        note: [
          first && final
            ? `**${fmt(first.rss)} MB at ${fmt(first.at)} s → ${fmt(final.rss)} MB at ${fmt(final.at)} s: ${steady ? 'within' : 'NOT within'} 10%** (${fmt((100 * (final.rss - first.rss)) / first.rss)}%)`
            : 'no RSS readings',
          `every ${fmt(SAMPLE_SECONDS)} s: ${series}`,
          '"per second" column: last RSS in MB',
        ].join('; '),
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

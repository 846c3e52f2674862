/**
 * Backlog flush: the service (or a relay) comes back after an outage and delivers its backlog as
 * fast as 50 connections allow, to the whole `checkout-kit serve` (embedded store), while the
 * service allows only 100 Get payment reads per second (429 with `Retry-After: 1` beyond): a
 * token bucket with a second of burst, or with BENCH_FLUSH_LIMIT=window at most 100 in each whole
 * second of the stand-in's clock (fixed windows, as many services count).
 *
 * The backlog: for each of 5,000 payments its `payment.created`, `payment.partially_paid` and
 * `payment.paid` events (15,000 distinct events), in order per payment but interleaved across
 * payments, plus 5,000 duplicate deliveries of earlier events spread in later (20,000 deliveries).
 * The stand-in answers every payment as paid in full (its latest state), so each payment must end
 * with exactly one call of the paid handler.
 *
 * Measured: time until every delivery is acknowledged, non-2xx, ack p99, serve's peak RSS (VmHWM,
 * read every 250 ms), Get payment reads and 429s the stand-in counted, time until every payment's
 * paid handler has completed (the handler appends a line per call to a file, polled; from the
 * flush's start and from the last ack, and against payments ÷ rate, the floor), handler
 * calls per payment (total, max; must be exactly 1 each), and, for the ratio, the receiver with
 * dispatch off (verify + embedded store + ack, no engine) acknowledging the same deliveries in the
 * same run. One ~5 s ack phase swings with the machine (the same dispatch-off run measured
 * 3,200–5,500/s back to back), so the ack phases interleave: BENCH_FLUSH_ROUNDS (3) rounds of the
 * reference then serve, and a last reference; each round's ratio is serve's rate against the mean
 * of the reference runs either side of it, and the headline is the median round. Every round's
 * serve is fresh (new store, new stand-in); the earlier rounds' serve is stopped once its acks are
 * in, the last round's is watched until every payment is fulfilled. Each ack phase also reports
 * the CPU the server process used per delivery (all its threads; the stand-in's beside serve's),
 * the load generator's, and how busy the machine's cores were: whether a phase was bound by CPU or
 * by waiting (fsync, the pipeline). Gives up
 * after BENCH_FLUSH_TIMEOUT_SECONDS (600), or earlier when nothing has happened for
 * BENCH_FLUSH_IDLE_SECONDS (60) after the last ack (no read, no handler call), and reports what was
 * reached.
 *
 * BENCH_FLUSH_WARMUP_PAYMENTS (0): before each ack phase, the server first takes the backlog of this
 * many other payments (and serve fulfils them), then rests 1.5 s: the flush then meets a server
 * that has been running, its code compiled by V8's optimizing tiers, as a merchant's has when the
 * service comes back after an outage; 0 starts each ack phase on a server just started. Reads,
 * handler calls and the drain time count the flush's payments only.
 *
 * Run alone: `node --import tsx test/bench/run.ts flush`; a quick run: `BENCH_FLUSH_PAYMENTS=500 …`.
 * Env: BENCH_FLUSH_PAYMENTS (5000), BENCH_FLUSH_DUPLICATES (as many as payments), BENCH_FLUSH_RPS (100),
 * BENCH_FLUSH_LIMIT (`bucket`, or `window`: how the stand-in counts BENCH_FLUSH_RPS), BENCH_FLUSH_ROUNDS (3),
 * BENCH_FLUSH_TIMEOUT_SECONDS (600), BENCH_FLUSH_IDLE_SECONDS (60), BENCH_FLUSH_ACK_TIMEOUT_SECONDS
 * (15: how long a delivery waits for its answer, as a sender would), BENCH_STANDIN_DELAY_MS (0),
 * and CHECKOUT_MAX_RPS / CHECKOUT_DISPATCH_CONCURRENCY (passed on to serve; CHECKOUT_MAX_RPS is
 * BENCH_FLUSH_RPS unless set, as a merchant sets it to what the service allows).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startChild, standInStats, type StandInStats } from './serve-children.js';
import {
  cpuDuring,
  deliver,
  envNumber,
  failures,
  fmt,
  fromList,
  sleep,
  startServe,
  watchPeak,
  WEBHOOK_SECRET,
  type BenchResult,
  type HandlerCalls,
} from './serve-harness.js';
import { backlog } from './serve-payloads.js';

const PAYMENTS = Math.round(envNumber('BENCH_FLUSH_PAYMENTS', 5000));
const DUPLICATES = Math.round(process.env.BENCH_FLUSH_DUPLICATES !== undefined ? Number(process.env.BENCH_FLUSH_DUPLICATES) || 0 : PAYMENTS);
const RPS = envNumber('BENCH_FLUSH_RPS', 100);
const LIMIT = limitKind(process.env.BENCH_FLUSH_LIMIT);
const TIMEOUT_SECONDS = envNumber('BENCH_FLUSH_TIMEOUT_SECONDS', 600);
const IDLE_SECONDS = envNumber('BENCH_FLUSH_IDLE_SECONDS', 60);
const ACK_TIMEOUT_SECONDS = envNumber('BENCH_FLUSH_ACK_TIMEOUT_SECONDS', 15);
const STANDIN_DELAY_MS = envNumber('BENCH_STANDIN_DELAY_MS', 0);
/** After the last payment's handler: how long to keep watching for extra (duplicate) calls. */
const GRACE_SECONDS = 5;
const ROUNDS = Math.max(1, Math.round(envNumber('BENCH_FLUSH_ROUNDS', 3)));
const WARMUP_PAYMENTS = Math.max(0, Math.round(envNumber('BENCH_FLUSH_WARMUP_PAYMENTS', 0)));
/** The warm-up's backlog: other payments (a tag of their own, as 8 hex digits: ids must be UUIDs), the same shape. */
const warmup = WARMUP_PAYMENTS > 0 ? backlog({ payments: WARMUP_PAYMENTS, duplicates: WARMUP_PAYMENTS, tag: 'ffffffff' }) : undefined;
const PROGRESS_EVERY_MS = 30_000;

type Deliveries = Parameters<typeof fromList>[0];

function limitKind(value: string | undefined): 'bucket' | 'window' {
  if (value === undefined || value === '' || value === 'bucket') return 'bucket';
  if (value === 'window') return 'window';
  throw new Error(`BENCH_FLUSH_LIMIT is \`bucket\` (a token bucket, the default) or \`window\` (fixed one-second windows), got "${value}"`);
}

/**
 * One ack phase: every delivery sent to `port` as fast as 50 connections allow, timed to the last
 * answer, with the CPU of `pids` (the server as `server`; the generator is added) meanwhile.
 */
async function ackPhase(port: number, pids: { server: number; standin?: number }, deliveries: Deliveries) {
  const started = performance.now();
  const {
    value: result,
    seconds: cpu,
    threads,
    machineBusy,
  } = await cpuDuring({ ...pids, generator: process.pid }, () =>
    deliver({ port, next: fromList(deliveries), amount: deliveries.length, timeoutSeconds: ACK_TIMEOUT_SECONDS }),
  );
  return { result, seconds: (result.lastResponseAt - started) / 1000, cpu: phaseCpu(cpu, machineBusy, deliveries.length, threads.server ?? {}) };
}

/**
 * The warm-up (BENCH_FLUSH_WARMUP_PAYMENTS): the warm-up backlog sent to `port`, then, for serve
 * (`handlerCalls`), until every warm-up payment's handler has run, and 1.5 s of rest (the stand-in's
 * rate limit refills, dispatch goes idle).
 */
async function warmUp(port: number, handlerCalls?: () => Promise<HandlerCalls>): Promise<void> {
  if (!warmup) return;
  const result = await deliver({ port, next: fromList(warmup.deliveries), amount: warmup.deliveries.length, timeoutSeconds: ACK_TIMEOUT_SECONDS });
  const failed = failures(result);
  if (failed.length > 0) throw new Error(`flush: the warm-up was not all acknowledged: ${failed.join(', ')}`);
  const deadline = Date.now() + 120_000;
  while (handlerCalls && perPaymentFigures(await handlerCalls(), warmup.paymentIds).none > 0) {
    if (Date.now() > deadline) throw new Error('flush: the warm-up payments were not all fulfilled within 120 s');
    await sleep(250);
  }
  await sleep(1500);
}

/** The dispatch-off receiver acknowledging the same deliveries: what serve's receiver could do without its engine. */
async function receiverAlone(deliveries: Deliveries) {
  const dir = await mkdtemp(join(tmpdir(), 'checkout-kit-flush-receiver-'));
  const receiver = await startChild({ kind: 'receiver', dir, secret: WEBHOOK_SECRET });
  try {
    await warmUp(receiver.port);
    const phase = await ackPhase(receiver.port, { server: receiver.pid }, deliveries);
    return { ...phase, stored: await receiver.close() };
  } finally {
    receiver.kill();
    await rm(dir, { recursive: true, force: true });
  }
}

/** One of the earlier rounds: a fresh serve (and stand-in) acknowledging the backlog, stopped once every delivery is answered. */
async function serveAcksOnly(deliveries: Deliveries) {
  const standin = await startChild({ kind: 'standin', mode: 'paid', rps: RPS, limit: LIMIT, delayMs: STANDIN_DELAY_MS });
  try {
    const serve = await startServe({ servicePort: standin.port, store: 'file', maxRps: RPS });
    try {
      await warmUp(serve.port, () => serve.handlerCalls());
      return await ackPhase(serve.port, { server: serve.pid, standin: standin.pid }, deliveries);
    } finally {
      await serve.stop(2000).catch(() => undefined);
    }
  } finally {
    await standin.close().catch(() => undefined);
    standin.kill();
  }
}

/** CPU of one ack phase: the server's (and the stand-in's) µs per delivery, and how busy the machine's cores were. */
interface PhaseCpu {
  serverUs: number;
  /** The server's µs per delivery by thread group: `main` (the event loop), V8's and libuv's threads by name. */
  serverThreadsUs: Record<string, number>;
  standinUs: number | undefined;
  generatorUs: number;
  machineBusy: number;
}

function phaseCpu(seconds: Record<string, number>, machineBusy: number, deliveries: number, threads: Record<string, number>): PhaseCpu {
  const us = (name: string) => (seconds[name] === undefined ? undefined : (seconds[name] * 1e6) / deliveries);
  const threadUs = Object.fromEntries(Object.entries(threads).map(([group, s]) => [group, (s * 1e6) / deliveries]));
  return { serverUs: us('server')!, serverThreadsUs: threadUs, standinUs: us('standin'), generatorUs: us('generator')!, machineBusy };
}

/** The server's thread groups with their µs per delivery, the busiest first (groups under 1 µs left out). */
const threadsNote = (threads: Record<string, number>) =>
  Object.entries(threads)
    .filter(([, us]) => us >= 1)
    .sort((a, b) => b[1] - a[1])
    .map(([group, us]) => `${group} ${fmt(us)}`)
    .join(', ');

const cpuNote = (cpu: PhaseCpu) =>
  `${fmt(cpu.serverUs)} µs CPU per delivery (${threadsNote(cpu.serverThreadsUs)})${cpu.standinUs === undefined ? '' : ` (+${fmt(cpu.standinUs)} the stand-in's)`}, generator ${fmt(cpu.generatorUs)} µs, machine ${fmt(100 * cpu.machineBusy)}% busy`;

const median = (values: readonly number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

/** The stand-in's counters since `before` (the warm-up's reads left out). */
function since(now: StandInStats, before: StandInStats): StandInStats {
  return {
    requests: now.requests - before.requests,
    ok: now.ok - before.ok,
    notFound: now.notFound - before.notFound,
    rateLimited: now.rateLimited - before.rateLimited,
    distinct: now.distinct - before.distinct,
    lastRequestAt: now.lastRequestAt,
  };
}

/** Handler calls but the warm-up payments'. */
function flushCalls(calls: HandlerCalls): number {
  return calls.total - (warmup?.paymentIds.reduce((sum, id) => sum + (calls.perPayment.get(id) ?? 0), 0) ?? 0);
}

function perPaymentFigures(calls: HandlerCalls, paymentIds: readonly string[]) {
  let max = 0;
  let none = 0;
  let several = 0;
  for (const id of paymentIds) {
    const count = calls.perPayment.get(id) ?? 0;
    if (count === 0) none += 1;
    if (count > 1) several += 1;
    if (count > max) max = count;
  }
  return { max, none, several, done: paymentIds.length - none };
}

export async function run(): Promise<BenchResult[]> {
  const { deliveries, paymentIds } = backlog({ payments: PAYMENTS, duplicates: DUPLICATES });
  const total = deliveries.length;
  const label = `flush (${fmt(total)} deliveries: ${fmt(PAYMENTS)} payments × 3 events + ${fmt(DUPLICATES)} duplicates; service allows ${fmt(RPS)} reads/s${LIMIT === 'window' ? ' in fixed one-second windows' : ''}${warmup ? `; each server warmed up first with ${fmt(warmup.deliveries.length)} deliveries of ${fmt(WARMUP_PAYMENTS)} other payments` : ''})`;

  const references: Array<Awaited<ReturnType<typeof receiverAlone>>> = [];
  /** Serve's ack phases, one per round: the earlier rounds' here, the last round's added below. */
  const serveAcks: Array<Awaited<ReturnType<typeof ackPhase>>> = [];
  for (let round = 1; round < ROUNDS; round += 1) {
    references.push(await receiverAlone(deliveries));
    serveAcks.push(await serveAcksOnly(deliveries));
  }
  references.push(await receiverAlone(deliveries));

  const standin = await startChild({ kind: 'standin', mode: 'paid', rps: RPS, limit: LIMIT, delayMs: STANDIN_DELAY_MS });
  let serve: Awaited<ReturnType<typeof startServe>> | undefined;
  try {
    serve = await startServe({ servicePort: standin.port, store: 'file', maxRps: RPS });
    const peak = watchPeak(serve.pid);
    const warm = serve;
    await warmUp(serve.port, () => warm.handlerCalls());
    // What the warm-up read: the flush's reads are counted from here.
    const before: StandInStats = await standInStats(standin.port);
    const started = performance.now();
    const elapsed = () => (performance.now() - started) / 1000;
    const lastRound = await ackPhase(serve.port, { server: serve.pid, standin: standin.pid }, deliveries);
    const { result, seconds: ackSeconds } = lastRound;
    serveAcks.push(lastRound);

    // Until every payment's paid handler has completed, or time is up, or nothing moves any more.
    let calls = await serve.handlerCalls();
    let stats: StandInStats = since(await standInStats(standin.port), before);
    // The reads after the last ack: the drain alone, at the allowed rate once acks no longer share the machine.
    const atLastAck = { reads: stats.requests, wallMs: Date.now() };
    let figures = perPaymentFigures(calls, paymentIds);
    let halfAt: number | undefined;
    let allAt: number | undefined;
    let lastCalls = flushCalls(calls);
    let lastProgress = Date.now();
    let lastPrint = Date.now();
    let stopReason = 'timeout';
    for (;;) {
      calls = await serve.handlerCalls();
      stats = since(await standInStats(standin.port), before);
      figures = perPaymentFigures(calls, paymentIds);
      if (halfAt === undefined && figures.done * 2 >= PAYMENTS) halfAt = elapsed();
      if (figures.done >= PAYMENTS) {
        allAt = elapsed();
        stopReason = 'done';
        break;
      }
      const callsNow = flushCalls(calls);
      if (callsNow !== lastCalls) {
        lastCalls = callsNow;
        lastProgress = Date.now();
      }
      lastProgress = Math.max(lastProgress, stats.lastRequestAt);
      if (Date.now() - lastProgress > IDLE_SECONDS * 1000) {
        stopReason = `nothing happened for ${fmt(IDLE_SECONDS)} s`;
        break;
      }
      if (elapsed() > TIMEOUT_SECONDS) break;
      if (Date.now() - lastPrint > PROGRESS_EVERY_MS) {
        lastPrint = Date.now();
        process.stderr.write(
          `flush: ${fmt(elapsed())} s, ${fmt(figures.done)}/${fmt(PAYMENTS)} paid handlers done, ${fmt(stats.requests)} reads (${fmt(stats.rateLimited)} answered 429)\n`,
        );
      }
      await sleep(500);
    }
    if (allAt !== undefined) {
      // Any late extra call (a handler called twice) shows up here.
      await sleep(GRACE_SECONDS * 1000);
      calls = await serve.handlerCalls();
      stats = since(await standInStats(standin.port), before);
      figures = perPaymentFigures(calls, paymentIds);
    }
    const watchedSeconds = elapsed();
    const peakMb = peak.stop();
    const summary = await serve.logSummary();
    const { graceful } = await serve.stop();
    serve = undefined;
    // The reference again, once serve is gone: each round's ratio is against the runs either side.
    references.push(await receiverAlone(deliveries));
    const referenceRates = references.map((run) => total / run.seconds);
    const serveRates = serveAcks.map((run) => total / run.seconds);
    const ratios = serveRates.map((rate, i) => rate / ((referenceRates[i]! + referenceRates[i + 1]!) / 2));
    const ratio = median(ratios);
    const serveRate = median(serveRates);
    const ackP99s = serveAcks.map((run) => run.result.latency.p99);
    const serveFailures = serveAcks.flatMap((run, i) => failures(run.result).map((f) => `round ${i + 1}: ${f}`));

    // The floor: each payment read once at the allowed rate.
    const floorSeconds = PAYMENTS / RPS;
    const fulfilled =
      allAt !== undefined
        ? `**all ${fmt(PAYMENTS)} paid handlers done ${fmt(allAt, 1)} s after the flush began, ${(allAt / floorSeconds).toFixed(2)}× payments ÷ rate (${fmt(floorSeconds)} s)**, ${fmt(allAt - ackSeconds, 1)} s after the last ack (half by ${fmt(halfAt ?? allAt, 1)} s)`
        : `**only ${fmt(figures.done)} of ${fmt(PAYMENTS)} payments' handlers done after ${fmt(watchedSeconds)} s** (gave up: ${stopReason}${halfAt !== undefined ? `; half by ${fmt(halfAt, 1)} s` : ''})`;
    const exactlyOnce =
      figures.none === 0 && figures.several === 0 ? 'exactly 1 each' : `${fmt(figures.several)} payments called more than once, ${fmt(figures.none)} never`;
    return [
      {
        name: `${label}, serve: acknowledged`,
        eventsPerSec: serveRate,
        note: [
          `median of ${fmt(ROUNDS)} rounds (${serveRates.map((rate) => fmt(rate)).join(', ')}/s; the last round all answered in ${fmt(ackSeconds, 1)} s)`,
          `**${ratio.toFixed(2)}× the receiver with dispatch off** (median round; rounds ${ratios.map((r) => `${r.toFixed(2)}×`).join(', ')}, each against the dispatch-off runs either side)`,
          `ack p99 ${ackP99s.map((p) => `${p}`).join(', ')} ms (the last round's p50 ${result.latency.p50} ms)`,
          ...(serveFailures.length > 0 ? serveFailures : ['0 non-2xx in every round']),
          `peak RSS ${fmt(peakMb)} MB (last round)`,
          `ack phases: ${serveAcks.map((run) => cpuNote(run.cpu)).join('; ')}`,
        ].join('; '),
      },
      {
        name: `${label}, receiver with dispatch off, same deliveries: acknowledged (median of ${fmt(references.length)} runs)`,
        eventsPerSec: median(referenceRates),
        note: references
          .map(
            (run, i) =>
              `run ${i + 1}: ${fmt(total / run.seconds)}/s, all answered in ${fmt(run.seconds, 1)} s, ack p99 ${run.result.latency.p99} ms, ${fmt(run.stored ?? 0)} events stored${failures(
                run.result,
              )
                .map((f) => `, ${f}`)
                .join('')}, ${cpuNote(run.cpu)}`,
          )
          .join('; '),
      },
      {
        name: `${label}, serve: payments fulfilled`,
        eventsPerSec: figures.done / (allAt ?? watchedSeconds),
        note: [fulfilled, `handler calls: ${fmt(flushCalls(calls))} in all, at most ${fmt(figures.max)} for one payment (${exactlyOnce})`].join('; '),
      },
      {
        name: `${label}, serve: Get payment reads`,
        eventsPerSec: stats.requests / watchedSeconds,
        note: [
          `${fmt(stats.requests)} reads in ${fmt(watchedSeconds)} s, ${fmt(stats.rateLimited)} answered 429 (${fmt((100 * stats.rateLimited) / Math.max(1, stats.requests))}%), ${fmt(stats.ok)} answered 200 for ${fmt(stats.distinct)} distinct payments`,
          `floor at ${fmt(RPS)} reads/s: ${fmt(PAYMENTS / RPS)} s to read each payment once`,
          `after the last ack ${fmt(stats.requests - atLastAck.reads)} reads at ${fmt((stats.requests - atLastAck.reads) / Math.max(0.001, (stats.lastRequestAt - atLastAck.wallMs) / 1000), 1)}/s`,
          summary.warnings + summary.errors > 0
            ? `serve logged ${fmt(summary.warnings)} warnings, ${fmt(summary.errors)} errors: ${summary.top.join('; ')}`
            : 'serve logged no warnings',
          graceful ? '' : 'serve did not exit within 10 s of SIGTERM (killed)',
        ]
          .filter(Boolean)
          .join('; '),
      },
    ];
  } finally {
    await serve?.stop(2000).catch(() => undefined);
    await standin.close().catch(() => undefined);
    standin.kill();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  console.table(await run());
}

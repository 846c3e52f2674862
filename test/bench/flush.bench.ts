/**
 * Backlog flush: the service (or a relay) comes back after an outage and delivers its backlog as
 * fast as 50 connections allow, to the whole `checkout-kit serve` (embedded store), while the
 * service allows only 100 Get payment reads per second (429 with `Retry-After: 1` beyond).
 *
 * The backlog: for each of 5,000 payments its `payment.created`, `payment.partially_paid` and
 * `payment.paid` events (15,000 distinct events), in order per payment but interleaved across
 * payments, plus 5,000 duplicate deliveries of earlier events spread in later (20,000 deliveries).
 * The stand-in answers every payment as paid in full (its latest state), so each payment must end
 * with exactly one call of the paid handler.
 *
 * Measured: time until every delivery is acknowledged, non-2xx, ack p99, serve's peak RSS (VmHWM,
 * read every 250 ms), Get payment reads and 429s the stand-in counted, time until every payment's
 * paid handler has completed (the handler appends a line per call to a file, polled), handler
 * calls per payment (total, max; must be exactly 1 each), and, for the ratio, the receiver with
 * dispatch off (verify + embedded store + ack, no engine) acknowledging the same deliveries in the
 * same run, once before serve and once after (the ratio is against the mean of the two). Gives up
 * after BENCH_FLUSH_TIMEOUT_SECONDS (600), or earlier when nothing has happened for
 * BENCH_FLUSH_IDLE_SECONDS (60) after the last ack (no read, no handler call), and reports what was
 * reached.
 *
 * Run alone: `node --import tsx test/bench/run.ts flush`; a quick run: `BENCH_FLUSH_PAYMENTS=500 …`.
 * Env: BENCH_FLUSH_PAYMENTS (5000), BENCH_FLUSH_DUPLICATES (as many as payments), BENCH_FLUSH_RPS (100),
 * BENCH_FLUSH_TIMEOUT_SECONDS (600), BENCH_FLUSH_IDLE_SECONDS (60), BENCH_FLUSH_ACK_TIMEOUT_SECONDS
 * (15: how long a delivery waits for its answer, as a sender would), BENCH_STANDIN_DELAY_MS (0),
 * and CHECKOUT_MAX_RPS / CHECKOUT_DISPATCH_CONCURRENCY (passed on to serve).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startChild, standInStats, type StandInStats } from './serve-children.js';
import { deliver, envNumber, failures, fmt, fromList, sleep, startServe, watchPeak, WEBHOOK_SECRET, type BenchResult, type HandlerCalls } from './serve-harness.js';
import { backlog } from './serve-payloads.js';

const PAYMENTS = Math.round(envNumber('BENCH_FLUSH_PAYMENTS', 5000));
const DUPLICATES = Math.round(process.env.BENCH_FLUSH_DUPLICATES !== undefined ? Number(process.env.BENCH_FLUSH_DUPLICATES) || 0 : PAYMENTS);
const RPS = envNumber('BENCH_FLUSH_RPS', 100);
const TIMEOUT_SECONDS = envNumber('BENCH_FLUSH_TIMEOUT_SECONDS', 600);
const IDLE_SECONDS = envNumber('BENCH_FLUSH_IDLE_SECONDS', 60);
const ACK_TIMEOUT_SECONDS = envNumber('BENCH_FLUSH_ACK_TIMEOUT_SECONDS', 15);
const STANDIN_DELAY_MS = envNumber('BENCH_STANDIN_DELAY_MS', 0);
/** After the last payment's handler: how long to keep watching for extra (duplicate) calls. */
const GRACE_SECONDS = 5;
const PROGRESS_EVERY_MS = 30_000;

/** The dispatch-off receiver acknowledging the same deliveries: what serve's receiver could do without its engine. */
async function receiverAlone(deliveries: Parameters<typeof fromList>[0]) {
  const dir = await mkdtemp(join(tmpdir(), 'checkout-kit-flush-receiver-'));
  const receiver = await startChild({ kind: 'receiver', dir, secret: WEBHOOK_SECRET });
  try {
    const started = performance.now();
    const result = await deliver({ port: receiver.port, next: fromList(deliveries), amount: deliveries.length, timeoutSeconds: ACK_TIMEOUT_SECONDS });
    const seconds = (result.lastResponseAt - started) / 1000;
    const stored = await receiver.close();
    return { result, seconds, stored };
  } finally {
    receiver.kill();
    await rm(dir, { recursive: true, force: true });
  }
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
  const label = `flush (${fmt(total)} deliveries: ${fmt(PAYMENTS)} payments × 3 events + ${fmt(DUPLICATES)} duplicates; service allows ${fmt(RPS)} reads/s)`;

  const alone = await receiverAlone(deliveries);
  const aloneRate = total / alone.seconds;

  const standin = await startChild({ kind: 'standin', mode: 'paid', rps: RPS, delayMs: STANDIN_DELAY_MS });
  let serve: Awaited<ReturnType<typeof startServe>> | undefined;
  try {
    serve = await startServe({ servicePort: standin.port, store: 'file' });
    const peak = watchPeak(serve.pid);
    const started = performance.now();
    const elapsed = () => (performance.now() - started) / 1000;
    const result = await deliver({ port: serve.port, next: fromList(deliveries), amount: total, timeoutSeconds: ACK_TIMEOUT_SECONDS });
    const ackSeconds = (result.lastResponseAt - started) / 1000;
    const serveRate = total / ackSeconds;

    // Until every payment's paid handler has completed, or time is up, or nothing moves any more.
    let calls = await serve.handlerCalls();
    let stats: StandInStats = await standInStats(standin.port);
    let figures = perPaymentFigures(calls, paymentIds);
    let halfAt: number | undefined;
    let allAt: number | undefined;
    let lastCalls = calls.total;
    let lastProgress = Date.now();
    let lastPrint = Date.now();
    let stopReason = 'timeout';
    for (;;) {
      calls = await serve.handlerCalls();
      stats = await standInStats(standin.port);
      figures = perPaymentFigures(calls, paymentIds);
      if (halfAt === undefined && figures.done * 2 >= PAYMENTS) halfAt = elapsed();
      if (figures.done >= PAYMENTS) {
        allAt = elapsed();
        stopReason = 'done';
        break;
      }
      if (calls.total !== lastCalls) {
        lastCalls = calls.total;
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
      stats = await standInStats(standin.port);
      figures = perPaymentFigures(calls, paymentIds);
    }
    const watchedSeconds = elapsed();
    const peakMb = peak.stop();
    const summary = await serve.logSummary();
    const { graceful } = await serve.stop();
    serve = undefined;
    // The reference again, once serve is gone: one ~5 s phase swings with the machine, so the
    // ratio is against the mean of a run before and a run after.
    const after = await receiverAlone(deliveries);
    const afterRate = total / after.seconds;
    const referenceRate = (aloneRate + afterRate) / 2;

    const fulfilled =
      allAt !== undefined
        ? `**all ${fmt(PAYMENTS)} paid handlers done ${fmt(allAt, 1)} s after the flush began** (half by ${fmt(halfAt ?? allAt, 1)} s)`
        : `**only ${fmt(figures.done)} of ${fmt(PAYMENTS)} payments' handlers done after ${fmt(watchedSeconds)} s** (gave up: ${stopReason}${halfAt !== undefined ? `; half by ${fmt(halfAt, 1)} s` : ''})`;
    const exactlyOnce = figures.none === 0 && figures.several === 0 ? 'exactly 1 each' : `${fmt(figures.several)} payments called more than once, ${fmt(figures.none)} never`;
    return [
      {
        name: `${label}, serve: acknowledged`,
        eventsPerSec: serveRate,
        note: [
          `all answered in ${fmt(ackSeconds, 1)} s`,
          `**${(serveRate / referenceRate).toFixed(2)}× the receiver with dispatch off** (mean of its runs before and after; ${(serveRate / aloneRate).toFixed(2)}× and ${(serveRate / afterRate).toFixed(2)}× each)`,
          `ack p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms`,
          ...failures(result),
          `peak RSS ${fmt(peakMb)} MB`,
        ].join('; '),
      },
      {
        name: `${label}, receiver with dispatch off, same deliveries: acknowledged (mean of two runs)`,
        eventsPerSec: referenceRate,
        note: [alone, after]
          .map((run, i) => `${i === 0 ? 'before serve' : 'after'}: ${fmt(total / run.seconds)}/s, all answered in ${fmt(run.seconds, 1)} s, ack p99 ${run.result.latency.p99} ms, ${fmt(run.stored ?? 0)} events stored${failures(run.result).map((f) => `, ${f}`).join('')}`)
          .join('; '),
      },
      {
        name: `${label}, serve: payments fulfilled`,
        eventsPerSec: figures.done / (allAt ?? watchedSeconds),
        note: [fulfilled, `handler calls: ${fmt(calls.total)} in all, at most ${fmt(figures.max)} for one payment (${exactlyOnce})`].join('; '),
      },
      {
        name: `${label}, serve: Get payment reads`,
        eventsPerSec: stats.requests / watchedSeconds,
        note: [
          `${fmt(stats.requests)} reads in ${fmt(watchedSeconds)} s, ${fmt(stats.rateLimited)} answered 429 (${fmt((100 * stats.rateLimited) / Math.max(1, stats.requests))}%), ${fmt(stats.ok)} answered 200 for ${fmt(stats.distinct)} distinct payments`,
          `floor at ${fmt(RPS)} reads/s: ${fmt(PAYMENTS / RPS)} s to read each payment once`,
          summary.warnings + summary.errors > 0 ? `serve logged ${fmt(summary.warnings)} warnings, ${fmt(summary.errors)} errors: ${summary.top.join('; ')}` : 'serve logged no warnings',
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

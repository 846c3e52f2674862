/**
 * What history costs a restart of `serve` (embedded store): its RSS and how long until it answers,
 * on a store holding BENCH_HISTORY_PAYMENTS (100,000) fulfilled payments, against an empty store.
 * Goal: RSS within 1.25× of the empty store's, and the history adding under 300 ms to the start,
 * whatever its size.
 *
 * The history is written by `serve` itself, as a merchant's would be: one signed `payment.paid`
 * event per payment (autocannon, 50 connections), each confirmed against the stand-in (answering
 * paid, no rate limit; `CHECKOUT_MAX_RPS` 100,000, `CHECKOUT_DISPATCH_CONCURRENCY` 64) and its paid
 * handler run once; then serve stops. On the shared 2-core machine 100,000 took 566 s with the
 * SQLite store (~180 a second). Each payment leaves its event and body, the event's dispatch run, the
 * payment's record and snapshot, its fulfillment run and two timeline entries (~5 KB on disk).
 *
 * Then BENCH_HISTORY_ROUNDS (3) rounds, each starting `serve` (the bin, as merchants run it) on an
 * empty store and then on the history: time from spawn until it printed its listening line, until
 * its first answer (one signed delivery of a new payment, sent as soon as it listens: 200 once the
 * event is stored), its RSS then and BENCH_HISTORY_SETTLE_SECONDS (3) later (V8's heap beside it,
 * from serve's /metrics), and its peak (VmHWM); then how long that first /metrics scrape took (it
 * reads the store's overview counts, as the alert check does every 30 s). Rows give the median
 * round and every round's figure. Last, BENCH_HISTORY_TRICKLE_RATE (20) deliveries a second of new
 * payments, evenly paced, for BENCH_HISTORY_TRICKLE_SECONDS (15): their ack p50 and p99 and serve's CPU,
 * what history costs a serve in steady traffic (each is dispatched: the queue is read as it empties).
 * Each start on the history adds the payments it was sent (1 + the trickle's) to it.
 *
 * BENCH_HISTORY_BASELINE_CLI=<another build's dist/cli/main.js> (BENCH_HISTORY_BASELINE_NAME:
 * `baseline`) builds a history with that serve too and interleaves its starts with this
 * checkout's, in the same rounds; the rows then give this checkout against it.
 * BENCH_HISTORY_DIR / BENCH_HISTORY_BASELINE_DIR use a store folder built before instead of
 * building one (starts write to it); BENCH_HISTORY_KEEP=1 keeps the folders built (their paths go to stderr).
 *
 * Run: `npm run bench -- store-memory`; quicker: `BENCH_HISTORY_PAYMENTS=10000 npm run bench -- store-memory`.
 */
import { request as httpRequest } from 'node:http';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { signWebhook } from '../../src/webhooks/index.js';
import type { ForkedServer } from './load.js';
import { WEBHOOK_PATH } from './load.js';
import { startChild } from './serve-children.js';
import { cpuSeconds, deliver, envNumber, fmt, memoryMb, pacedDeliver, sleep, startServe, WEBHOOK_SECRET, type BenchResult } from './serve-harness.js';
import { distinctPaidEvents } from './serve-payloads.js';

const PAYMENTS = Math.round(envNumber('BENCH_HISTORY_PAYMENTS', 100_000));
const ROUNDS = Math.round(envNumber('BENCH_HISTORY_ROUNDS', 3));
const SETTLE_SECONDS = envNumber('BENCH_HISTORY_SETTLE_SECONDS', 3);
/** After the scrape: a steady trickle of new payments' deliveries, evenly paced, this many a second for this long. */
const TRICKLE_RATE = envNumber('BENCH_HISTORY_TRICKLE_RATE', 20);
const TRICKLE_SECONDS = envNumber('BENCH_HISTORY_TRICKLE_SECONDS', 15);
/** How long building the history may take before the bench gives up. */
const BUILD_TIMEOUT_SECONDS = envNumber('BENCH_HISTORY_BUILD_TIMEOUT_SECONDS', 3600);
const PROGRESS_EVERY_MS = 30_000;

interface Side {
  name: string;
  /** undefined: this checkout's bin. */
  cli: string | undefined;
  /** A store folder built before (serve writes to it). */
  given: string | undefined;
}

interface Start {
  listenMs: number;
  firstAnswerMs: number;
  firstStatus: number;
  rssFirstMb: number;
  rssSettledMb: number;
  peakMb: number;
  heapUsedMb: number;
  /** How long serve took to answer its first `/metrics` scrape (the store's overview counts are read for it). */
  metricsMs: number;
  /** The trickle: ack p50/p99/max (ms), non-2xx and errors, serve's CPU over it (1 = one core). */
  trickle: { p50: number; p99: number; max: number; failed: number; cpuShare: number };
}

export async function run(): Promise<BenchResult[]> {
  const sides: Side[] = [{ name: 'this checkout', cli: undefined, given: process.env.BENCH_HISTORY_DIR || undefined }];
  if (process.env.BENCH_HISTORY_BASELINE_CLI) {
    sides.push({
      name: process.env.BENCH_HISTORY_BASELINE_NAME || 'baseline',
      cli: process.env.BENCH_HISTORY_BASELINE_CLI,
      given: process.env.BENCH_HISTORY_BASELINE_DIR || undefined,
    });
  }
  const standin = await startChild({ kind: 'standin', mode: 'paid' });
  const built: string[] = [];
  try {
    const histories = new Map<Side, { dir: string; note: string }>();
    for (const side of sides) {
      if (side.given) {
        histories.set(side, { dir: side.given, note: `the store at ${side.given}` });
        continue;
      }
      const dir = await mkdtemp(join(tmpdir(), 'checkout-kit-bench-history-'));
      built.push(dir);
      histories.set(side, { dir, note: await buildHistory(side, dir, standin) });
    }
    const starts = new Map<Side, { empty: Start[]; history: Start[] }>(sides.map((side) => [side, { empty: [], history: [] }]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const side of sides) {
        starts.get(side)!.empty.push(await startOnce(side, 'file', standin));
        starts.get(side)!.history.push(await startOnce(side, `file:${histories.get(side)!.dir}`, standin));
      }
    }
    const rows: BenchResult[] = [];
    for (const side of sides) {
      const { empty, history } = starts.get(side)!;
      const other = side === sides[0] && sides[1] ? { name: sides[1].name, ...starts.get(sides[1])! } : undefined;
      rows.push(...sideRows(side, empty, history, histories.get(side)!.note, other));
    }
    return rows;
  } finally {
    await standin.close().catch(() => undefined);
    standin.kill();
    for (const dir of built) {
      if (process.env.BENCH_HISTORY_KEEP) process.stderr.write(`bench: kept the history ${dir}\n`);
      else await rm(dir, { recursive: true, force: true });
    }
  }
}

/** `serve` takes PAYMENTS payments, one paid event each, and fulfils every one; then it stops. */
async function buildHistory(side: Side, dir: string, standin: ForkedServer): Promise<string> {
  const started = performance.now();
  const serve = await startServe({
    servicePort: standin.port,
    store: `file:${dir}`,
    maxRps: 100_000,
    cli: side.cli,
    env: { CHECKOUT_DISPATCH_CONCURRENCY: '64' },
  });
  try {
    const result = await deliver({ port: serve.port, next: distinctPaidEvents(), amount: PAYMENTS, timeoutSeconds: 30 });
    if (result['2xx'] !== PAYMENTS) throw new Error(`building the history: ${result['2xx']} of ${PAYMENTS} deliveries acknowledged`);
    let done = 0;
    let reported = performance.now();
    while (done < PAYMENTS) {
      if (performance.now() - started > BUILD_TIMEOUT_SECONDS * 1000)
        throw new Error(`building the history: ${done} of ${PAYMENTS} payments fulfilled after ${BUILD_TIMEOUT_SECONDS} s`);
      await sleep(1000);
      done = (await serve.handlerCalls()).total;
      if (performance.now() - reported > PROGRESS_EVERY_MS) {
        reported = performance.now();
        process.stderr.write(`bench: ${side.name}: ${fmt(done)} of ${fmt(PAYMENTS)} payments fulfilled\n`);
      }
    }
  } finally {
    await serve.stop(60_000);
  }
  return `${fmt(PAYMENTS)} payments fulfilled by its serve in ${fmt((performance.now() - started) / 1000)} s, ${fmt(await folderMb(dir))} MB on disk`;
}

async function startOnce(side: Side, store: string, standin: ForkedServer): Promise<Start> {
  const serve = await startServe({ servicePort: standin.port, store, cli: side.cli, listenTimeoutSeconds: 600 });
  try {
    const status = await postOne(serve.port);
    const answeredAt = performance.now();
    const first = memoryMb(serve.pid)!;
    await sleep(SETTLE_SECONDS * 1000);
    const settled = memoryMb(serve.pid)!;
    const scrapedAt = performance.now();
    const heap = await serve.heapMb();
    const metricsMs = performance.now() - scrapedAt;
    const cpuBefore = cpuSeconds(serve.pid) ?? NaN;
    const trickleStarted = performance.now();
    const paced = await pacedDeliver({ port: serve.port, next: nextDelivery, seconds: TRICKLE_SECONDS, rate: TRICKLE_RATE });
    const cpuShare = ((cpuSeconds(serve.pid) ?? NaN) - cpuBefore) / ((performance.now() - trickleStarted) / 1000);
    return {
      listenMs: serve.listeningAt - serve.spawnedAt,
      firstAnswerMs: answeredAt - serve.spawnedAt,
      firstStatus: status,
      rssFirstMb: first.rss,
      rssSettledMb: settled.rss,
      peakMb: settled.peak,
      heapUsedMb: heap?.used ?? NaN,
      metricsMs,
      trickle: { p50: paced.p50, p99: paced.p99, max: paced.max, failed: paced.non2xx + paced.errors, cpuShare },
    };
  } finally {
    await serve.stop();
  }
}

const nextDelivery = distinctPaidEvents();

/** One signed delivery of a new payment; its status code. */
function postOne(port: number): Promise<number> {
  const { msgId, body } = nextDelivery();
  const headers = {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(body)),
    ...signWebhook({ id: msgId, body, secret: WEBHOOK_SECRET }),
  };
  return new Promise((resolve, reject) => {
    const request = httpRequest({ host: '127.0.0.1', port, path: WEBHOOK_PATH, method: 'POST', headers }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
    });
    request.on('error', reject);
    request.end(body);
  });
}

async function folderMb(dir: string): Promise<number> {
  let bytes = 0;
  for (const name of await readdir(dir)) bytes += (await stat(join(dir, name))).size;
  return bytes / 2 ** 20;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const spread = (values: number[]) => values.map((v) => fmt(v)).join(', ');

function sideRows(
  side: Side,
  empty: Start[],
  history: Start[],
  historyNote: string,
  other: { name: string; empty: Start[]; history: Start[] } | undefined,
): BenchResult[] {
  const pick = (starts: Start[], key: Exclude<keyof Start, 'trickle'>) => starts.map((s) => s[key]);
  const trickle = (starts: Start[], key: keyof Start['trickle']) => starts.map((s) => s.trickle[key]);
  const m = (starts: Start[], key: Exclude<keyof Start, 'trickle'>) => median(pick(starts, key));
  const statuses = [...empty, ...history].filter((s) => s.firstStatus !== 200).length;
  const describe = (starts: Start[]) =>
    `listening ${fmt(m(starts, 'listenMs'))} ms after spawn (rounds ${spread(pick(starts, 'listenMs'))}), first delivery answered at ${fmt(m(starts, 'firstAnswerMs'))} ms (${spread(pick(starts, 'firstAnswerMs'))}); ` +
    `RSS ${fmt(m(starts, 'rssFirstMb'))} MB then, ${fmt(m(starts, 'rssSettledMb'))} MB ${fmt(SETTLE_SECONDS)} s later (${spread(pick(starts, 'rssSettledMb'))}), heap used ${fmt(m(starts, 'heapUsedMb'))} MB, peak ${fmt(m(starts, 'peakMb'))} MB; ` +
    `then the first /metrics scrape answered in ${fmt(m(starts, 'metricsMs'))} ms (${spread(pick(starts, 'metricsMs'))}); ` +
    `then ${fmt(TRICKLE_RATE)} deliveries/s evenly paced for ${fmt(TRICKLE_SECONDS)} s: ack p50 ${fmt(median(trickle(starts, 'p50')))} ms, p99 ${fmt(median(trickle(starts, 'p99')))} ms (${spread(trickle(starts, 'p99'))}), ` +
    `max ${fmt(median(trickle(starts, 'max')))} ms, serve CPU ${fmt(median(trickle(starts, 'cpuShare')) * 100)}% of a core (${spread(trickle(starts, 'cpuShare').map((v) => v * 100))})` +
    (trickle(starts, 'failed').some((n) => n > 0) ? `, **${spread(trickle(starts, 'failed'))} deliveries failed**` : '');
  const rssRatio = m(history, 'rssSettledMb') / m(empty, 'rssSettledMb');
  const openAdded = m(history, 'firstAnswerMs') - m(empty, 'firstAnswerMs');
  const against = other
    ? `; **against ${other.name}: RSS with history ${fmt(m(history, 'rssSettledMb') / m(other.history, 'rssSettledMb'), 2)}×, first answer with history ${fmt(m(history, 'firstAnswerMs') / m(other.history, 'firstAnswerMs'), 2)}×**`
    : '';
  return [
    {
      name: `serve (${side.name}), empty store: time to first answer (ms)`,
      eventsPerSec: m(empty, 'firstAnswerMs'),
      note: `"per second" column: ms from spawn to the first delivery's answer; ${describe(empty)}${statuses > 0 ? `; **${statuses} first deliveries not answered 200**` : ''}`,
    },
    {
      name: `serve (${side.name}), ${fmt(PAYMENTS)} fulfilled payments of history: time to first answer (ms)`,
      eventsPerSec: m(history, 'firstAnswerMs'),
      note:
        `"per second" column: ms from spawn to the first delivery's answer; ${describe(history)}; ` +
        `**RSS ${fmt(rssRatio, 2)}× the empty store's (goal ≤ 1.25×), history adds ${fmt(openAdded)} ms to the first answer (goal < 300 ms)**; history: ${historyNote}${against}`,
    },
  ];
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  for (const result of await run()) console.log(`${result.name}: ${fmt(result.eventsPerSec)} (${result.note})`);
}

/**
 * `serve` beside the other processes of one machine on one SQLite file: does its ack p99 at 500
 * deliveries a second stay under 100 ms while a cron `reconcile` pass, `events list` and the
 * console run beside it, and does the reconcile pass still finish?
 *
 * Everything is what a merchant runs: `checkout-kit serve --console` (the package's bin, see
 * serve-harness.ts) on `file:<dir>`, against the stand-in service in its own process (answering
 * every payment paid, no rate limit), with `CHECKOUT_MAX_RPS` BENCH_BESIDE_RPS (100) for serve and
 * for every command beside it, as a merchant sets it to what the service allows each process.
 *
 * The store's history: BENCH_BESIDE_FULFILLED (3,000) payments, one signed `payment.paid` each,
 * confirmed and fulfilled by a `serve` of their own (then stopped); then BENCH_BESIDE_OPEN (1,000)
 * open payments written straight into the store, each last heard of an hour ago (a checkout
 * whose webhooks never came): the work of the reconcile pass. That folder is copied twice, so
 * each phase below starts a fresh `serve` on the same history.
 *
 * Phases, in this order, each BENCH_BESIDE_SECONDS (30) of deliveries evenly paced at
 * BENCH_BESIDE_RATE (500) a second (`pacedDeliver`: one every 2 ms on up to 50 keep-alive
 * connections, sent by the clock whatever the answers: open loop) after
 * BENCH_BESIDE_WARMUP_SECONDS (3) of the same load, each delivery a distinct `payment.paid` for a
 * distinct payment:
 *
 * 1. bare fastify (a child answering 200 on the webhook route, no work): the machine's floor;
 * 2. baseline: `serve --console` with nothing beside it;
 * 3. beside: `serve --console` on its copy, while, from the start of the load,
 *    - `checkout-kit events list` runs again and again as its own process (four variants in turn:
 *      plain, `--status pending --limit 200`, `--type payment.paid --since 10m --json`,
 *      `--status done --json --limit 500`), BENCH_BESIDE_LIST_PAUSE_MS (1000) between runs;
 *    - the console is polled over HTTP, one request at a time, BENCH_BESIDE_CONSOLE_PAUSE_MS (200)
 *      between them, through its pages in turn (overview, events, pending events, the events'
 *      20th page, open payments, payments, an open payment's page, runs, pending runs, the log);
 *    - at BENCH_BESIDE_RECONCILE_AT_SECONDS (5) into the load, `checkout-kit reconcile --json` (as
 *      cron runs it: default `--older-than 10m`, `--concurrency 8`) as its own process; it is
 *      waited for after the load (BENCH_BESIDE_RECONCILE_TIMEOUT_SECONDS, 300, then killed).
 *
 * In both serve phases `/metrics` is scraped every 5 s, as Prometheus would (the same in both):
 * from it serve's own ack time over the load (its histogram, the warm-up subtracted) and its
 * event-loop delay (the highest of the scrapes').
 *
 * Reported: ack p50/p99/p99.9/max at the load generator, the p99 of each BENCH_BESIDE_WINDOW_SECONDS
 * (5) of deliveries sent, the rate acknowledged (2xx over the time from the first send to the last
 * answer), serve's own ack quantiles and event-loop delay, the generator's event-loop delay, serve's
 * CPU and the machine's; for the beside phase also the p99 of the deliveries sent while the
 * reconcile pass ran, the pass's exit code, duration and summary (and whether each open payment's
 * handler ran exactly once), and how many `events list` runs and console polls completed, with their
 * times. No assertion on any figure: this measures, it does not judge.
 *
 * Run: `npm run bench -- beside` (about 3 minutes); BENCH_KEEP_DIR=1 keeps the store folders;
 * BENCH_BESIDE_WITH=reconcile (or `list`, `console`, any comma-separated subset) runs only those
 * beside serve, to tell their shares apart (the rows of what did not run then read 0).
 */
import { cp, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { Agent, request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { SqliteStore } from '../../src/store/index.js';
import { percentile } from '../support/percentile.js';
import type { ForkedServer } from './load.js';
import { startChild, standInStats } from './serve-children.js';
import {
  ackQuantiles,
  cpuDuring,
  deliver,
  envNumber,
  exitedChildrenCpuSeconds,
  fmt,
  pacedDeliver,
  sleep,
  startServe,
  type AckQuantiles,
  type BenchResult,
  type CliRun,
  type PacedResult,
  type ServeProcess,
} from './serve-harness.js';
import { distinctPaidEvents, newRunTag, payment, uuidFor } from './serve-payloads.js';

const RATE = Math.round(envNumber('BENCH_BESIDE_RATE', 500));
const SECONDS = envNumber('BENCH_BESIDE_SECONDS', 30);
const WARMUP_SECONDS = envNumber('BENCH_BESIDE_WARMUP_SECONDS', 3);
const WINDOW_SECONDS = envNumber('BENCH_BESIDE_WINDOW_SECONDS', 5);
const FULFILLED = Math.round(envNumber('BENCH_BESIDE_FULFILLED', 3000));
const OPEN = Math.round(envNumber('BENCH_BESIDE_OPEN', 1000));
const RPS = Math.round(envNumber('BENCH_BESIDE_RPS', 100));
const RECONCILE_AT_SECONDS = envNumber('BENCH_BESIDE_RECONCILE_AT_SECONDS', 5);
const RECONCILE_TIMEOUT_SECONDS = envNumber('BENCH_BESIDE_RECONCILE_TIMEOUT_SECONDS', 300);
const LIST_PAUSE_MS = envNumber('BENCH_BESIDE_LIST_PAUSE_MS', 1000);
const CONSOLE_PAUSE_MS = envNumber('BENCH_BESIDE_CONSOLE_PAUSE_MS', 200);
/** What runs beside serve in the beside phase: BENCH_BESIDE_WITH, a comma-separated subset (to tell their shares apart). */
const WITH = new Set((process.env.BENCH_BESIDE_WITH || 'reconcile,list,console').split(',').map((name) => name.trim()));
for (const name of WITH)
  if (!['reconcile', 'list', 'console'].includes(name)) throw new Error(`BENCH_BESIDE_WITH takes reconcile, list and console, got "${name}"`);
const SCRAPE_EVERY_MS = 5000;
/** The requirement this bench measures against (not asserted). */
const TARGET_P99_MS = 100;

const LIST_VARIANTS: string[][] = [
  ['events', 'list'],
  ['events', 'list', '--status', 'pending', '--limit', '200'],
  ['events', 'list', '--type', 'payment.paid', '--since', '10m', '--json'],
  ['events', 'list', '--status', 'done', '--json', '--limit', '500'],
];

const consolePages = (openPayment: string) => [
  '/',
  '/events',
  '/events?status=pending',
  '/events?page=20',
  '/payments?open=yes',
  '/payments',
  `/payments/${openPayment}`,
  '/runs',
  '/runs?status=pending',
  '/log',
];

const log = (line: string) => process.stderr.write(`beside: ${line}\n`);

// ---------------------------------------------------------------------------------------------
// The history.

interface History {
  dir: string;
  openIds: string[];
  note: string;
}

/** FULFILLED payments fulfilled by a serve of their own, then OPEN open payments written into the store. */
async function buildHistory(root: string, standin: ForkedServer): Promise<History> {
  const dir = join(root, 'seed');
  const started = performance.now();
  const seeder = await startServe({ servicePort: standin.port, store: `file:${dir}`, maxRps: 100_000, env: { CHECKOUT_DISPATCH_CONCURRENCY: '64' } });
  try {
    const result = await deliver({ port: seeder.port, next: distinctPaidEvents(), amount: FULFILLED, timeoutSeconds: 30 });
    if (result['2xx'] !== FULFILLED) throw new Error(`the history: ${result['2xx']} of ${FULFILLED} deliveries acknowledged`);
    const deadline = performance.now() + 600_000;
    let done = 0;
    while ((done = (await seeder.handlerCalls()).total) < FULFILLED) {
      if (performance.now() > deadline) throw new Error(`the history: ${done} of ${FULFILLED} payments fulfilled after 600 s`);
      await sleep(500);
    }
  } finally {
    await seeder.stop(60_000);
  }
  const fulfilledSeconds = (performance.now() - started) / 1000;

  // Open payments, last heard of an hour ago (reconcile's default --older-than is 10 minutes).
  const tag = newRunTag();
  const openIds = Array.from({ length: OPEN }, (_, i) => uuidFor(tag, i));
  const store = new SqliteStore({ dir });
  await store.open();
  try {
    const hourAgo = new Date(Date.now() - 3_600_000);
    for (let i = 0; i < openIds.length; i += 500) {
      await Promise.all(
        openIds.slice(i, i + 500).map((id) => {
          const snapshot = payment(id, 'created', hourAgo.getTime() + 60_000);
          return store.updateResource(
            {
              kind: 'payment',
              id,
              environment: 'test',
              orderId: String(snapshot.referenceId),
              source: 'checkout',
              snapshot,
              expiresAt: String(snapshot.expiresAt),
            },
            hourAgo,
          );
        }),
      );
    }
  } finally {
    await store.close();
  }
  const mb = await folderMb(dir);
  return {
    dir,
    openIds,
    note: `${fmt(FULFILLED)} payments fulfilled by their own serve in ${fmt(fulfilledSeconds)} s, then ${fmt(OPEN)} open payments last heard of an hour ago; ${fmt(mb, 1)} MB on disk`,
  };
}

async function folderMb(dir: string): Promise<number> {
  let bytes = 0;
  for (const name of await readdir(dir)) bytes += (await stat(join(dir, name))).size;
  return bytes / 2 ** 20;
}

// ---------------------------------------------------------------------------------------------
// What runs beside serve.

/** `step` again and again, `pauseMs` between, until stopped (the step under way finishes). */
function repeat(pauseMs: number, step: () => Promise<void>): { stop(): Promise<void> } {
  let stopped = false;
  let wake: (() => void) | undefined;
  const done = (async () => {
    while (!stopped) {
      await step();
      if (stopped) break;
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, pauseMs);
      });
    }
  })();
  return {
    async stop() {
      stopped = true;
      wake?.();
      await done;
    },
  };
}

interface Timed {
  ms: number;
  ok: boolean;
}

interface ListRun extends Timed {
  variant: number;
  cpuSeconds: number;
  code: number | null;
  error: string;
}

/** `events list` as its own process, the variants in turn. */
function listLoop(serve: ServeProcess) {
  const runs: ListRun[] = [];
  let n = 0;
  const loop = repeat(LIST_PAUSE_MS, async () => {
    const variant = n++ % LIST_VARIANTS.length;
    const run = await serve
      .runCli(LIST_VARIANTS[variant]!, { timeoutMs: 60_000 })
      .catch((error: unknown): CliRun => ({ code: null, signal: null, timedOut: false, ms: NaN, stdout: '', stderr: String(error), cpuSeconds: 0 }));
    runs.push({
      variant,
      ms: run.ms,
      cpuSeconds: run.cpuSeconds,
      ok: run.code === 0 && run.stdout.length > 0,
      code: run.code,
      error: run.code === 0 ? '' : (run.stderr.trim().split('\n').at(-1) ?? '').slice(0, 200),
    });
  });
  return { runs, stop: () => loop.stop() };
}

interface Poll extends Timed {
  page: string;
  status: number;
  bytes: number;
}

/** The console's pages in turn, one request at a time (keep-alive, as a browser would). */
function consoleLoop(port: number, pages: string[]) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const polls: Poll[] = [];
  let n = 0;
  const get = (page: string) =>
    new Promise<Poll>((resolve) => {
      const started = performance.now();
      const request = httpRequest({ host: '127.0.0.1', port, path: `/checkout-kit${page}`, agent, headers: { accept: 'text/html' } }, (response) => {
        let bytes = 0;
        response.on('data', (chunk: Buffer) => (bytes += chunk.length));
        response.on('end', () =>
          resolve({ page, status: response.statusCode ?? 0, bytes, ms: performance.now() - started, ok: response.statusCode === 200 && bytes > 0 }),
        );
      });
      request.setTimeout(60_000, () => request.destroy(new Error('timeout')));
      request.on('error', () => resolve({ page, status: 0, bytes: 0, ms: performance.now() - started, ok: false }));
      request.end();
    });
  const loop = repeat(CONSOLE_PAUSE_MS, async () => {
    polls.push(await get(pages[n++ % pages.length]!));
  });
  return {
    polls,
    async stop() {
      await loop.stop();
      agent.destroy();
    },
  };
}

interface ReconcileRun {
  /** Seconds after the load began. */
  startedAt: number;
  endedAt: number;
  run: CliRun;
  summary: Record<string, unknown> | undefined;
}

function parseSummary(stdout: string): Record<string, unknown> | undefined {
  const text = stdout.trim();
  for (const candidate of [text, text.slice(text.lastIndexOf('\n{') + 1)]) {
    try {
      return JSON.parse(candidate) as Record<string, unknown>;
    } catch {
      // not this one
    }
  }
  return undefined;
}

/** `/metrics` every SCRAPE_EVERY_MS, keeping serve's event-loop delay of each scrape. */
function scraper(serve: ServeProcess) {
  const lag: Array<{ p99: number; max: number }> = [];
  const read = async () => {
    const text = await serve.metrics();
    const figures = text === undefined ? undefined : ackQuantiles(text);
    if (figures?.loopLagMaxMs !== undefined) lag.push({ p99: figures.loopLagP99Ms ?? NaN, max: figures.loopLagMaxMs });
  };
  let busy: Promise<void> = Promise.resolve();
  const timer = setInterval(() => void (busy = busy.then(read)), SCRAPE_EVERY_MS);
  return {
    async stop() {
      clearInterval(timer);
      await busy;
      return lag;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Phases.

interface Phase {
  paced: PacedResult;
  /** 2xx over the time from the load's start to its last answer. */
  rate: number;
  /** Seconds from the load's start to its last answer. */
  spanSeconds: number;
  /** Shares of one core over the load; `commands`: the CLI commands beside serve that ended meanwhile. */
  cpu: { server: number; generator: number; standin: number; commands: number; machineBusy: number };
  generatorLag: { p99: number; max: number };
}

interface ServePhase extends Phase {
  own: AckQuantiles | undefined;
  loopLag: Array<{ p99: number; max: number }>;
  reads: number;
  handlersDuring: number;
  log: string;
  stop: string;
  beside?: { reconcile: ReconcileRun | undefined; reconcileP99: number; reconcileSent: number; lists: ListRun[]; polls: Poll[]; exactlyOnce: string };
}

/** One measured load on `port` with the CPU of `pids`, the generator's event-loop delay, and `during` started with it. */
async function measuredLoad(port: number, pids: Record<string, number>, during?: () => () => Promise<void>): Promise<Phase> {
  const lag = monitorEventLoopDelay({ resolution: 10 });
  lag.enable();
  const next = distinctPaidEvents();
  const exitedBefore = exitedChildrenCpuSeconds();
  const {
    value: paced,
    seconds,
    machineBusy,
  } = await cpuDuring({ ...pids, generator: process.pid }, async () => {
    const finish = during?.();
    try {
      return await pacedDeliver({ port, next, seconds: SECONDS, rate: RATE, windowSeconds: WINDOW_SECONDS });
    } finally {
      await finish?.();
    }
  });
  lag.disable();
  const commandSeconds = exitedChildrenCpuSeconds() - exitedBefore;
  const spanMs = Math.max(...paced.samples.map((s) => s.sentAt + s.ms));
  return {
    paced,
    rate: (paced.answered - paced.non2xx) / (spanMs / 1000),
    spanSeconds: spanMs / 1000,
    cpu: {
      server: (seconds.server ?? NaN) / (spanMs / 1000),
      generator: (seconds.generator ?? NaN) / (spanMs / 1000),
      standin: (seconds.standin ?? NaN) / (spanMs / 1000),
      commands: commandSeconds / (spanMs / 1000),
      machineBusy,
    },
    generatorLag: { p99: lag.percentile(99) / 1e6, max: lag.max / 1e6 },
  };
}

async function barePhase(): Promise<Phase> {
  const bare = await startChild({ kind: 'bare' });
  try {
    await pacedDeliver({ port: bare.port, next: distinctPaidEvents(), seconds: WARMUP_SECONDS, rate: RATE });
    return await measuredLoad(bare.port, { server: bare.pid });
  } finally {
    await bare.close().catch(() => undefined);
    bare.kill();
  }
}

async function servePhase(kind: 'baseline' | 'beside', storeDir: string, standin: ForkedServer, history: History): Promise<ServePhase> {
  const serve = await startServe({ servicePort: standin.port, store: `file:${storeDir}`, maxRps: RPS, args: ['--console'] });
  let stopped = false;
  try {
    await pacedDeliver({ port: serve.port, next: distinctPaidEvents(), seconds: WARMUP_SECONDS, rate: RATE });
    const callsBefore = (await serve.handlerCalls()).total;
    const readsBefore = (await standInStats(standin.port)).requests;
    // Also resets serve's event-loop delay figures: the scrapes during the load cover the load alone.
    const metricsBefore = await serve.metrics();
    const scrapes = scraper(serve);

    let lists: ReturnType<typeof listLoop> | undefined;
    let polls: ReturnType<typeof consoleLoop> | undefined;
    let reconcile: Promise<ReconcileRun> | undefined;
    let loadStarted = 0;
    let loopLag: Array<{ p99: number; max: number }> = [];
    let metricsAfter: string | undefined;
    const phase = await measuredLoad(serve.port, { server: serve.pid, standin: standin.pid }, () => {
      loadStarted = performance.now();
      if (kind === 'beside') {
        if (WITH.has('list')) lists = listLoop(serve);
        if (WITH.has('console')) polls = consoleLoop(serve.port, consolePages(history.openIds[0]!));
        if (WITH.has('reconcile'))
          reconcile = sleep(RECONCILE_AT_SECONDS * 1000).then(async () => {
            const startedAt = (performance.now() - loadStarted) / 1000;
            log(`reconcile pass started ${fmt(startedAt, 1)} s into the load`);
            const run = await serve.runCli(['reconcile', '--json'], { timeoutMs: RECONCILE_TIMEOUT_SECONDS * 1000 });
            const endedAt = (performance.now() - loadStarted) / 1000;
            log(`reconcile pass ended ${fmt(endedAt, 1)} s into the load (exit ${run.code ?? run.signal})`);
            return { startedAt, endedAt, run, summary: parseSummary(run.stdout) };
          });
      }
      // The load is over: stop the loops (what runs finishes) and read serve's figures of the load;
      // the reconcile pass is waited for below.
      return async () => {
        loopLag = await scrapes.stop();
        metricsAfter = await serve.metrics();
        const last = metricsAfter === undefined ? undefined : ackQuantiles(metricsAfter);
        if (last?.loopLagMaxMs !== undefined) loopLag.push({ p99: last.loopLagP99Ms ?? NaN, max: last.loopLagMaxMs });
        await Promise.all([lists?.stop(), polls?.stop()]);
      };
    });
    const reconcileRun = await (reconcile as Promise<ReconcileRun> | undefined)?.catch((error: unknown) => {
      log(`reconcile could not run: ${String(error)}`);
      return undefined;
    });
    const own = metricsAfter === undefined ? undefined : ackQuantiles(metricsAfter, metricsBefore);
    const calls = await serve.handlerCalls();
    const reads = (await standInStats(standin.port)).requests - readsBefore;
    const summary = await serve.logSummary();
    const { graceful } = await serve.stop();
    stopped = true;

    let beside: ServePhase['beside'];
    if (kind === 'beside') {
      const during = reconcileRun ? phase.paced.samples.filter((s) => s.sentAt >= reconcileRun.startedAt * 1000 && s.sentAt < reconcileRun.endedAt * 1000) : [];
      const counts = history.openIds.map((id) => calls.perPayment.get(id) ?? 0);
      const never = counts.filter((c) => c === 0).length;
      const several = counts.filter((c) => c > 1).length;
      beside = {
        reconcile: reconcileRun,
        reconcileP99: percentile(
          during.map((s) => s.ms),
          99,
        ),
        reconcileSent: during.length,
        lists: lists?.runs ?? [],
        polls: polls?.polls ?? [],
        exactlyOnce:
          never === 0 && several === 0
            ? `each of the ${fmt(OPEN)} open payments' handler ran exactly once`
            : `of the ${fmt(OPEN)} open payments ${fmt(never)} had no handler call, ${fmt(several)} more than one`,
      };
    }
    return {
      ...phase,
      own,
      loopLag,
      reads,
      handlersDuring: calls.total - callsBefore,
      log:
        summary.warnings + summary.errors > 0
          ? `serve logged ${fmt(summary.warnings)} warnings, ${fmt(summary.errors)} errors: ${summary.top.join('; ')}`
          : 'serve logged no warnings',
      stop: graceful ? '' : 'serve did not exit within 10 s of SIGTERM (killed)',
      ...(beside ? { beside } : {}),
    };
  } finally {
    if (!stopped) await serve.stop(2000).catch(() => undefined);
  }
}

// ---------------------------------------------------------------------------------------------
// Rows.

const pctOf = (share: number) => `${fmt(share * 100)}%`;
const ms = (values: number[], p: number) => fmt(percentile(values, p));

function ackNote(phase: Phase): string {
  const { paced } = phase;
  const waits = paced.samples.map((s) => s.waitMs);
  return [
    `${fmt(paced.answered - paced.non2xx)} of ${fmt(paced.answered + paced.errors)} sent acknowledged, the last answer ${fmt(phase.spanSeconds, 1)} s after the first send (asked ${fmt(RATE)}/s for ${fmt(SECONDS)} s)`,
    `ack p50 ${paced.p50} ms, **p99 ${paced.p99} ms**, p99.9 ${paced.p999} ms, max ${paced.max} ms; p99 of each ${fmt(WINDOW_SECONDS)} s sent: ${paced.windowP99.join(', ')} ms`,
    `of which waiting for one of the generator's 50 connections: p50 ${ms(waits, 50)} ms, p99 ${ms(waits, 99)} ms, max ${ms(waits, 100)} ms`,
    paced.non2xx + paced.errors > 0 ? `**${fmt(paced.non2xx)} non-2xx, ${fmt(paced.errors)} errors**` : '',
  ]
    .filter(Boolean)
    .join('; ');
}

function machineNote(phase: Phase): string {
  return `CPU (one core = 100%): server ${pctOf(phase.cpu.server)}${Number.isFinite(phase.cpu.standin) ? `, stand-in ${pctOf(phase.cpu.standin)}` : ''}, generator ${pctOf(phase.cpu.generator)}${phase.cpu.commands > 0 ? `, the CLI commands beside serve (those that ended during the load) ${pctOf(phase.cpu.commands)}` : ''}; machine ${pctOf(phase.cpu.machineBusy)} busy of 2 cores; generator event-loop delay p99 ${fmt(phase.generatorLag.p99, 1)} ms, max ${fmt(phase.generatorLag.max, 1)} ms`;
}

function serveNote(phase: ServePhase, bare: Phase): string {
  const lagMax = Math.max(...phase.loopLag.map((l) => l.max));
  const lagP99 = Math.max(...phase.loopLag.map((l) => l.p99));
  return [
    ackNote(phase),
    `p99 ${fmt(phase.paced.p99 / Math.max(1, bare.paced.p99), 1)}× bare fastify's, p50 ${fmt(phase.paced.p50 / Math.max(1, bare.paced.p50), 1)}×`,
    phase.own
      ? `serve's own ack time over the load (its /metrics histogram, ${fmt(phase.own.count)} answers): p50 ≤ ${fmt(phase.own.p50AtMostMs, 1)} ms, p99 ≤ ${fmt(phase.own.p99AtMostMs, 1)} ms`
      : "serve's ack histogram unavailable",
    phase.loopLag.length > 0
      ? `serve's event-loop delay over the load (highest of ${phase.loopLag.length} readings, its /metrics every 5 s): p99 ${fmt(lagP99, 1)} ms, max ${fmt(lagMax, 1)} ms`
      : '',
    machineNote(phase),
    `${fmt(phase.reads)} Get payment reads and ${fmt(phase.handlersDuring)} handler calls from the load's start to the phase's end (serve's CHECKOUT_MAX_RPS ${fmt(RPS)}${phase.beside ? "; reconcile's reads and calls included" : ''})`,
    phase.log,
    phase.stop,
  ]
    .filter(Boolean)
    .join('; ');
}

function rows(history: History, bare: Phase, baseline: ServePhase, beside: ServePhase): BenchResult[] {
  const label = `beside (serve --console, SQLite file, ${fmt(RATE)} deliveries/s evenly paced for ${fmt(SECONDS)} s after ${fmt(WARMUP_SECONDS)} s of warm-up)`;
  const besideName = [WITH.has('reconcile') ? 'a reconcile pass' : '', WITH.has('list') ? 'events list' : '', WITH.has('console') ? 'the console' : '']
    .filter(Boolean)
    .join(', ')
    .replace(/, ([^,]*)$/, ' and $1');
  const b = beside.beside!;
  const reconcile = b.reconcile;
  const summary = reconcile?.summary;
  const passSeconds = reconcile ? reconcile.run.ms / 1000 : NaN;
  // Finished: it exited by itself with its summary of a pass it made (not skipped for another holding the lock).
  const finished = reconcile !== undefined && reconcile.run.code !== null && summary !== undefined && summary.skipped === false;
  const verdict = !finished ? 'did NOT finish' : reconcile.run.code === 0 ? 'finished' : 'finished, reporting failures';
  const overlap = reconcile ? Math.max(0, Math.min(reconcile.endedAt, beside.spanSeconds) - reconcile.startedAt) : 0;
  const listOk = b.lists.filter((r) => r.ok);
  const listFailed = b.lists.filter((r) => !r.ok);
  const pollOk = b.polls.filter((p) => p.ok);
  const pollFailed = b.polls.filter((p) => !p.ok);
  const byPage = [...new Set(b.polls.map((p) => p.page))].map((page) => {
    const of = b.polls.filter((p) => p.page === page).map((p) => p.ms);
    return `${page} ${fmt(of.length)}× p50 ${ms(of, 50)} / max ${ms(of, 100)} ms`;
  });
  const byVariant = LIST_VARIANTS.map((args, i) => {
    const of = b.lists.filter((r) => r.variant === i).map((r) => r.ms);
    return `\`${args.join(' ')}\` ${fmt(of.length)}× p50 ${ms(of, 50)} / max ${ms(of, 100)} ms`;
  });
  const met = (p99: number) => (p99 < TARGET_P99_MS ? `under ${TARGET_P99_MS} ms: met` : `**not under ${TARGET_P99_MS} ms: NOT met**`);
  return [
    { name: `${label}: bare fastify, same load`, eventsPerSec: bare.rate, note: [ackNote(bare), machineNote(bare)].join('; ') },
    { name: `${label}: serve alone (baseline)`, eventsPerSec: baseline.rate, note: `${serveNote(baseline, bare)}; history: ${history.note}` },
    {
      name: `${label}: serve with ${besideName} beside it`,
      eventsPerSec: beside.rate,
      note: [
        `**p99 ${beside.paced.p99} ms (${met(beside.paced.p99)}) against ${baseline.paced.p99} ms alone; p50 ${beside.paced.p50} against ${baseline.paced.p50} ms; max ${beside.paced.max} against ${baseline.paced.max} ms**`,
        reconcile ? `deliveries sent while the reconcile pass ran (${fmt(b.reconcileSent)}): p99 ${fmt(b.reconcileP99)} ms` : '',
        serveNote(beside, bare),
      ]
        .filter(Boolean)
        .join('; '),
    },
    {
      name: `${label}: the reconcile pass beside serve (open payments checked per second)`,
      eventsPerSec: reconcile && summary ? Number(summary.checked ?? 0) / passSeconds : 0,
      note: reconcile
        ? [
            `**${verdict}: exit ${reconcile.run.code ?? reconcile.run.signal}${reconcile.run.timedOut ? ` (killed after ${fmt(RECONCILE_TIMEOUT_SECONDS)} s)` : ''}, ${fmt(passSeconds, 1)} s from spawn to exit**`,
            `its CPU ${fmt(reconcile.run.cpuSeconds, 1)} s`,
            `started ${fmt(reconcile.startedAt, 1)} s into the load, ended at ${fmt(reconcile.endedAt, 1)} s (${fmt(overlap, 1)} s of it beside the load)`,
            summary
              ? `summary: ${['checked', 'advanced', 'fulfilled', 'missedByWebhooks', 'failed', 'awaitingRetry', 'unknownToService', 'durationMs'].map((key) => `${key} ${String(summary[key])}`).join(', ')}, ${Array.isArray(summary.errors) ? summary.errors.length : '?'} errors`
              : `no JSON summary (stdout: ${reconcile.run.stdout.slice(0, 200)}; stderr: ${reconcile.run.stderr.trim().split('\n').slice(-2).join(' | ').slice(0, 300)})`,
            `${fmt(OPEN)} open payments last heard of an hour ago, \`reconcile --json\` with its defaults (--older-than 10m, --concurrency 8), CHECKOUT_MAX_RPS ${fmt(RPS)}: the floor at ${fmt(RPS * 0.95)} reads/s is ${fmt(OPEN / (RPS * 0.95), 1)} s`,
            b.exactlyOnce,
          ].join('; ')
        : '**the reconcile pass did not run**',
    },
    {
      name: `${label}: \`events list\` runs beside serve (completed per second)`,
      eventsPerSec: listOk.length / beside.spanSeconds,
      note: [
        `${fmt(listOk.length)} runs completed (exit 0, output printed) in ${fmt(beside.spanSeconds, 1)} s, ${LIST_PAUSE_MS} ms between runs${listFailed.length > 0 ? `; **${fmt(listFailed.length)} failed**: ${[...new Set(listFailed.map((r) => `exit ${r.code}: ${r.error}`))].slice(0, 3).join(' / ')}` : ''}`,
        `spawn to exit: p50 ${ms(
          b.lists.map((r) => r.ms),
          50,
        )} ms, max ${ms(
          b.lists.map((r) => r.ms),
          100,
        )} ms; CPU per run p50 ${fmt(
          percentile(
            b.lists.map((r) => r.cpuSeconds),
            50,
          ),
          2,
        )} s`,
        ...byVariant,
      ].join('; '),
    },
    {
      name: `${label}: console pages polled beside serve (answered per second)`,
      eventsPerSec: pollOk.length / beside.spanSeconds,
      note: [
        `${fmt(pollOk.length)} pages answered 200 in ${fmt(beside.spanSeconds, 1)} s, one request at a time, ${CONSOLE_PAUSE_MS} ms between${pollFailed.length > 0 ? `; **${fmt(pollFailed.length)} not 200** (${[...new Set(pollFailed.map((p) => `${p.page} ${p.status}`))].slice(0, 5).join(', ')})` : ''}`,
        `answer time p50 ${ms(
          b.polls.map((p) => p.ms),
          50,
        )} ms, p99 ${ms(
          b.polls.map((p) => p.ms),
          99,
        )} ms, max ${ms(
          b.polls.map((p) => p.ms),
          100,
        )} ms`,
        ...byPage,
      ].join('; '),
    },
  ];
}

// ---------------------------------------------------------------------------------------------

export async function run(): Promise<BenchResult[]> {
  const root = await mkdtemp(join(tmpdir(), 'checkout-kit-bench-beside-'));
  const standin = await startChild({ kind: 'standin', mode: 'paid' });
  try {
    log(`building the history (${fmt(FULFILLED)} fulfilled, ${fmt(OPEN)} open)…`);
    const history = await buildHistory(root, standin);
    log(history.note);
    const copies = { baseline: join(root, 'baseline'), beside: join(root, 'beside') };
    for (const dir of Object.values(copies)) await cp(history.dir, dir, { recursive: true });
    log('bare fastify…');
    const bare = await barePhase();
    log(`bare: p50 ${bare.paced.p50} ms, p99 ${bare.paced.p99} ms`);
    log('serve alone…');
    const baseline = await servePhase('baseline', copies.baseline, standin, history);
    log(`baseline: p50 ${baseline.paced.p50} ms, p99 ${baseline.paced.p99} ms, max ${baseline.paced.max} ms`);
    log('serve with reconcile, events list and the console beside it…');
    const beside = await servePhase('beside', copies.beside, standin, history);
    log(`beside: p50 ${beside.paced.p50} ms, p99 ${beside.paced.p99} ms, max ${beside.paced.max} ms`);
    return rows(history, bare, baseline, beside);
  } finally {
    await standin.close().catch(() => undefined);
    standin.kill();
    if (process.env.BENCH_KEEP_DIR) log(`kept ${root}`);
    else await rm(root, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  for (const result of await run()) console.log(`${result.name}: ${fmt(result.eventsPerSec)} (${result.note})`);
}

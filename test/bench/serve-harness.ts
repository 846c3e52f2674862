/**
 * What the `serve` benchmarks share: the real `checkout-kit serve` in a child process (exactly
 * the command a merchant runs: the package's bin, `node dist/cli/main.js serve --port 0`, built
 * from this checkout's src/ once per run, configured by environment variables), a fulfillment
 * module that records its calls, readings of the serve
 * process's CPU time and memory from /proc, and autocannon loads of signed deliveries.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { openSync, closeSync, createWriteStream, readFileSync, readdirSync, existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { Agent, request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import { signWebhook } from '../../src/webhooks/index.js';
import { percentile } from '../support/percentile.js';
import { parsePrometheusStrict, sampleValue, type PromFamily } from '../support/prometheus.js';
import { WEBHOOK_PATH } from './load.js';
import type { Delivery } from './serve-payloads.js';

export type { BenchResult } from './load.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));
/**
 * The CLI under test: the package's bin as merchants run it (compiled JavaScript: running the
 * TypeScript through tsx costs ~28 MB more RSS, which the memory targets would count).
 * BENCH_SERVE_CLI points at another one, e.g. another checkout's `src/cli/main.ts` (run with tsx)
 * to compare a commit before and after.
 */
const CLI = process.env.BENCH_SERVE_CLI || join(REPO, 'dist/cli/main.js');
const TSX = import.meta.resolve('tsx');
let built: Promise<void> | undefined;

/** Build dist/ from src/ once per run (`npm run build`), so the bin is this checkout's code. */
function buildOnce(): Promise<void> {
  if (process.env.BENCH_SERVE_CLI) return Promise.resolve();
  built ??= new Promise<void>((resolve, reject) => {
    const tsc = spawn(process.execPath, [join(REPO, 'node_modules/typescript/bin/tsc'), '-p', join(REPO, 'tsconfig.json')], {
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    tsc.on('error', reject);
    tsc.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`bench: building dist/ failed (tsc exited ${code}); run npm run build to see why`))));
  });
  return built;
}

/** Secrets of the serve under test (formats as contract.md section 2 requires; the stand-in checks none). */
export const WEBHOOK_SECRET = 'whsec_c2VydmUtYmVuY2gtd2ViaG9vay1zZWNyZXQtMDE=';
const API_KEY = 'svc_mk_test_servebench0123456789';
const SIGNING_SECRET = 'svc_ms_servebench0123456789';

/** Connections of every load, as in the receiver benchmarks. */
export const CONNECTIONS = 50;

/** A positive number from the bench's environment, else `fallback`. */
export function envNumber(name: string, fallback: number): number {
  const value = Number(process.env[name]);
  return process.env[name] && Number.isFinite(value) && value > 0 ? value : fallback;
}

export const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/test';

// ---------------------------------------------------------------------------------------------
// /proc readings of a process (Linux).

let clockTicks: number | undefined;
/** Clock ticks per second of /proc/<pid>/stat times (`getconf CLK_TCK`, 100 on Linux). */
function ticksPerSecond(): number {
  if (clockTicks === undefined) {
    try {
      clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clockTicks = 100;
    }
  }
  return clockTicks;
}

/** User + system CPU seconds of a `/proc/<pid>/stat` or `/proc/<pid>/task/<tid>/stat` text. */
function statCpuSeconds(stat: string): number {
  // Fields after the command name (which may hold spaces), from field 3 (state) on.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond();
}

/** CPU seconds (user + system, all threads) the process has used so far; undefined once it is gone. */
export function cpuSeconds(pid: number): number | undefined {
  try {
    return statCpuSeconds(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return undefined;
  }
}

/**
 * CPU seconds each thread group of the process has used so far (`/proc/<pid>/task`): `main` (the
 * event loop), and the others by name (V8's workers and GC, libuv's thread pool, ...); {} once it is gone.
 */
export function threadCpuSeconds(pid: number): Record<string, number> {
  const out: Record<string, number> = {};
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const tid of tids) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const name = Number(tid) === pid ? 'main' : stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')).replace(/[\d\s]+$/, '');
      out[name] = (out[name] ?? 0) + statCpuSeconds(stat);
    } catch {
      // The thread ended meanwhile.
    }
  }
  return out;
}

/** The machine's CPU time so far, all cores (`/proc/stat`), in seconds: busy and in all. */
export function machineCpu(): { busy: number; total: number } {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal: idle and iowait are not busy.
  const total = fields.slice(0, 8).reduce((a, b) => a + b, 0);
  const idle = fields[3]! + fields[4]!;
  return { busy: (total - idle) / ticksPerSecond(), total: total / ticksPerSecond() };
}

/**
 * CPU used while `work` runs: by each process in `pids` (seconds) and by the whole machine (busy
 * share of all cores). Where a rate is bound by the machine, not one process, this says by what.
 */
export async function cpuDuring<T>(
  pids: Record<string, number>,
  work: () => Promise<T>,
): Promise<{ value: T; seconds: Record<string, number>; threads: Record<string, Record<string, number>>; machineBusy: number }> {
  const before = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, cpuSeconds(pid) ?? NaN]));
  const threadsBefore = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, threadCpuSeconds(pid)]));
  const machineBefore = machineCpu();
  const value = await work();
  const machineAfter = machineCpu();
  const seconds = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, (cpuSeconds(pid) ?? NaN) - before[name]!]));
  // Per thread group: what each used meanwhile (a thread started meanwhile counts from 0).
  const threads = Object.fromEntries(
    Object.entries(pids).map(([name, pid]) => {
      const after = threadCpuSeconds(pid);
      return [name, Object.fromEntries(Object.entries(after).map(([group, s]) => [group, s - (threadsBefore[name]![group] ?? 0)]))];
    }),
  );
  return { value, seconds, threads, machineBusy: (machineAfter.busy - machineBefore.busy) / (machineAfter.total - machineBefore.total) };
}

/**
 * CPU seconds (user + system) of this process's children that have exited and been waited for
 * (`cutime` + `cstime` of /proc/self/stat): over a span in which only short-lived commands ended,
 * what those commands used.
 */
export function exitedChildrenCpuSeconds(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[13]) + Number(fields[14])) / ticksPerSecond();
}

/** Resident memory now and its peak so far (VmRSS, VmHWM), in MB; undefined once the process is gone. */
export function memoryMb(pid: number): { rss: number; peak: number } | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
    return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
  } catch {
    return undefined;
  }
}

/** Keep the highest VmHWM seen while it runs (read every `everyMs`), so the peak survives the process. */
export function watchPeak(pid: number, everyMs = 250): { peakMb(): number; stop(): number } {
  let peak = 0;
  const read = () => {
    const memory = memoryMb(pid);
    if (memory && memory.peak > peak) peak = memory.peak;
  };
  read();
  const timer = setInterval(read, everyMs);
  timer.unref();
  return {
    peakMb: () => (read(), peak),
    stop: () => {
      read();
      clearInterval(timer);
      return peak;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// The serve process.

/** Children this process started that are still running: killed if the bench exits on an error. */
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export interface HandlerCalls {
  /** Lines in the calls file: one per handler call that returned. */
  total: number;
  /** Calls per payment id. */
  perPayment: Map<string, number>;
}

export interface ServeProcess {
  pid: number;
  port: number;
  /** The folder holding the store (embedded), the fulfillment module, its calls file and serve's log. */
  dir: string;
  /** What `serve` printed as its store. */
  storeDescription: string;
  /** `performance.now()` just before the process was spawned, and when its listening line was read. */
  spawnedAt: number;
  listeningAt: number;
  /** Handler calls so far. */
  handlerCalls(): Promise<HandlerCalls>;
  /** Warnings and errors serve logged (pino JSON lines on stderr, kept in a file), most frequent messages first. */
  logSummary(): Promise<{ warnings: number; errors: number; top: string[] }>;
  /** Serve's own view of its 200 acknowledgements (its `/metrics` histogram), beside the load generator's. */
  ackQuantiles(): Promise<AckQuantiles | undefined>;
  /** Serve's `/metrics` text now, or undefined when it does not answer (for `ackQuantiles(text, since)` over a window). */
  metrics(): Promise<string | undefined>;
  /**
   * Another `checkout-kit` command (`['reconcile', '--json']`, `['events', 'list']`) as its own
   * process, as cron or an operator runs it beside serve: the same CLI, working directory and
   * environment (store, service, keys, fulfillment module), so it shares serve's store.
   */
  runCli(args: string[], options?: { timeoutMs?: number }): Promise<CliRun>;
  /** V8's heap in MB by serve's `/metrics` (used includes garbage not yet collected; total is what the heap holds of the RSS). */
  heapMb(): Promise<{ used: number; total: number; newTotal: number; oldUsed: number; oldTotal: number; largeUsed: number } | undefined>;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves with whether it exited by itself. Removes the folder. */
  stop(graceMs?: number): Promise<{ graceful: boolean }>;
}

/** What a `runCli` command did. */
export interface CliRun {
  /** Exit code, or null when it ended by a signal (`signal`; SIGKILL when it outran its timeout). */
  code: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  /** From spawn to exit, ms. */
  ms: number;
  /** What it printed (the first MB of each). */
  stdout: string;
  stderr: string;
  /** CPU seconds it used (user + system, all threads), as last read from /proc every 100 ms: short by at most that much. */
  cpuSeconds: number;
}

export interface ServeOptions {
  /** The stand-in service's port. */
  servicePort: number;
  /** `file` (embedded store in the temp folder) or a `postgres://` URL (with `?schema=`). @default 'file' */
  store?: string;
  /** The paid handler sleeps this long before it returns. @default 0 */
  handlerSleepMs?: number;
  /** `kill -USR2 <pid>` writes a heap snapshot into serve's folder, as BENCH_SERVE_HEAP_SIGNAL=1 does for every serve. @default false */
  heapSnapshotSignal?: boolean;
  /**
   * `CHECKOUT_MAX_RPS` for serve when the bench's own environment sets none: what the stand-in
   * allows, as a merchant configures it. @default serve's own default
   */
  maxRps?: number;
  /** Another CLI than BENCH_SERVE_CLI or this checkout's bin (a `.ts` one runs through tsx), e.g. another commit's build. */
  cli?: string | undefined;
  /** More environment for serve (e.g. `CHECKOUT_DISPATCH_CONCURRENCY`), over what the bench sets. */
  env?: Record<string, string> | undefined;
  /** How long serve may take to open its store and listen. @default 30 */
  listenTimeoutSeconds?: number | undefined;
  /** More arguments after `serve --port 0` (e.g. `--console`). */
  args?: string[] | undefined;
}

/** The fulfillment module: every handler appends `<id> <outcome> <attempt>` to `callsFile` once it returns. */
function fulfillmentModule(callsFile: string, sleepMs: number): string {
  return `import { appendFileSync } from 'node:fs';
const CALLS = ${JSON.stringify(callsFile)};
const SLEEP_MS = ${Number(sleepMs)};
async function record(resource, ctx) {
  if (SLEEP_MS > 0) await new Promise((resolve) => setTimeout(resolve, SLEEP_MS));
  appendFileSync(CALLS, resource.id + ' ' + ctx.outcome + ' ' + ctx.attempt + '\\n');
}
export default { paid: record, underpaid: record, expired: record };
`;
}

/** The environment of `serve`: the bench's own, minus any CHECKOUT_* of it, plus the configuration under test. */
function serveEnv(dir: string, servicePort: number, store: string, handlers: string, maxRps: number | undefined): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) if (!name.startsWith('CHECKOUT_') && name !== 'PORT' && name !== 'HOST') env[name] = value;
  Object.assign(env, {
    CHECKOUT_BASE_URL: `http://127.0.0.1:${servicePort}`,
    CHECKOUT_API_KEY: API_KEY,
    CHECKOUT_SIGNING_SECRET: SIGNING_SECRET,
    CHECKOUT_WEBHOOK_SECRET: WEBHOOK_SECRET,
    CHECKOUT_STORE: store === 'file' ? `file:${join(dir, 'store')}` : store,
    CHECKOUT_HANDLERS: handlers,
    HOST: '127.0.0.1',
  });
  // Settings being added to serve: passed on when the bench is run with them (ignored where unknown).
  for (const name of ['CHECKOUT_MAX_RPS', 'CHECKOUT_DISPATCH_CONCURRENCY']) if (process.env[name]) env[name] = process.env[name];
  if (env.CHECKOUT_MAX_RPS === undefined && maxRps !== undefined) env.CHECKOUT_MAX_RPS = String(maxRps);
  return env;
}

/** More Node/V8 flags for serve (BENCH_SERVE_NODE_FLAGS), or undefined. */
function extraFlags(): string[] | undefined {
  const flags = (process.env.BENCH_SERVE_NODE_FLAGS ?? '').split(/\s+/).filter(Boolean);
  return flags.length > 0 ? flags : undefined;
}

/**
 * Start `checkout-kit serve` as a merchant runs it, in a fresh temp folder (its working
 * directory, so no `.env` of the repo is read), and wait until it listens.
 */
export async function startServe(options: ServeOptions): Promise<ServeProcess> {
  const cli = options.cli ?? CLI;
  if (options.cli === undefined) await buildOnce();
  const dir = await mkdtemp(join(tmpdir(), 'checkout-kit-serve-bench-'));
  const callsFile = join(dir, 'handler-calls.log');
  const handlers = join(dir, 'fulfillment.mjs');
  const logFile = join(dir, 'serve.log');
  await writeFile(handlers, fulfillmentModule(callsFile, options.handlerSleepMs ?? 0));
  await writeFile(callsFile, '');
  const logFd = openSync(logFile, 'a');
  const env = { ...serveEnv(dir, options.servicePort, options.store ?? 'file', handlers, options.maxRps), ...options.env };
  const loader = cli.endsWith('.ts') ? ['--import', TSX] : [];
  let child: ChildProcess;
  let spawnedAt: number;
  try {
    // BENCH_SERVE_CPU_PROF=dir writes a V8 CPU profile of each serve there (for finding where it waits).
    const profile = process.env.BENCH_SERVE_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_SERVE_CPU_PROF}`] : [];
    // BENCH_SERVE_HEAP_SIGNAL=1: `kill -USR2 <serve's pid>` writes a heap snapshot into its folder (keep it with BENCH_KEEP_DIR).
    const heap = options.heapSnapshotSignal || process.env.BENCH_SERVE_HEAP_SIGNAL ? ['--heapsnapshot-signal=SIGUSR2'] : [];
    // BENCH_SERVE_NODE_FLAGS='--trace-gc …': more Node/V8 flags for serve; what it prints after start goes to serve.stdout in its folder.
    const extra = extraFlags();
    spawnedAt = performance.now();
    child = spawn(process.execPath, [...profile, ...heap, ...(extra ?? []), ...loader, cli, 'serve', '--port', '0', ...(options.args ?? [])], {
      cwd: dir,
      env,
      stdio: ['ignore', 'pipe', logFd],
    });
  } finally {
    closeSync(logFd);
  }
  running.add(child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  void exited.then(() => running.delete(child));

  const logTail = async () => {
    const text = existsSync(logFile) ? await readFile(logFile, 'utf8') : '';
    return text.trim().split('\n').slice(-3).join(' | ').slice(0, 600);
  };
  let listening: { port: number; store: string; at: number };
  try {
    listening = await new Promise<{ port: number; store: string; at: number }>((resolve, reject) => {
      let out = '';
      const limit = options.listenTimeoutSeconds ?? 30;
      const timer = setTimeout(() => reject(new Error(`serve did not listen within ${limit} s`)), limit * 1000);
      child.stdout!.setEncoding('utf8');
      const onData = (chunk: string) => {
        out += chunk;
        const match = /listening on http:\/\/[^:]+:(\d+) \(store: ([^)]*)\)/.exec(out);
        if (match) {
          clearTimeout(timer);
          child.stdout!.off('data', onData);
          resolve({ port: Number(match[1]), store: match[2]!, at: performance.now() });
        }
      };
      child.stdout!.on('data', onData);
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`serve exited (${code}) before listening`));
      });
    });
  } catch (error) {
    child.kill('SIGKILL');
    await exited;
    const tail = await logTail();
    await rm(dir, { recursive: true, force: true });
    throw new Error(`${(error as Error).message}: ${tail}`, { cause: error });
  }
  // Keep draining stdout (serve prints little after start; a --trace-gc of BENCH_SERVE_NODE_FLAGS prints a lot).
  if (extraFlags()) child.stdout!.pipe(createWriteStream(join(dir, 'serve.stdout')));
  else child.stdout!.resume();
  /** Serve's `/metrics` text, or undefined when it does not answer. */
  const metricsText = async (): Promise<string | undefined> => {
    const response = await fetch(`http://127.0.0.1:${listening.port}/metrics`).catch(() => undefined);
    return response?.ok ? response.text() : undefined;
  };

  return {
    pid: child.pid!,
    port: listening.port,
    dir,
    storeDescription: listening.store,
    spawnedAt,
    listeningAt: listening.at,
    async handlerCalls() {
      const text = await readFile(callsFile, 'utf8');
      const perPayment = new Map<string, number>();
      let total = 0;
      for (const line of text.split('\n')) {
        if (!line) continue;
        total += 1;
        const id = line.slice(0, line.indexOf(' '));
        perPayment.set(id, (perPayment.get(id) ?? 0) + 1);
      }
      return { total, perPayment };
    },
    async ackQuantiles() {
      const text = await metricsText();
      return text === undefined ? undefined : ackQuantiles(text);
    },
    metrics: metricsText,
    runCli(args, { timeoutMs = 120_000 } = {}) {
      return new Promise<CliRun>((resolve, reject) => {
        const started = performance.now();
        const command = spawn(process.execPath, [...loader, cli, ...args], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
        running.add(command);
        const out = { stdout: '', stderr: '' };
        for (const stream of ['stdout', 'stderr'] as const) {
          command[stream].setEncoding('utf8');
          command[stream].on('data', (chunk: string) => {
            if (out[stream].length < 2 ** 20) out[stream] += chunk;
          });
        }
        let cpu = 0;
        const sampler = setInterval(() => (cpu = cpuSeconds(command.pid!) ?? cpu), 100);
        let timedOut = false;
        const timer = setTimeout(() => {
          timedOut = true;
          command.kill('SIGKILL');
        }, timeoutMs);
        command.once('error', (error) => {
          clearTimeout(timer);
          clearInterval(sampler);
          running.delete(command);
          reject(error);
        });
        command.once('exit', () => clearInterval(sampler));
        command.once('close', (code, signal) => {
          clearTimeout(timer);
          running.delete(command);
          resolve({ code, signal, timedOut, ms: performance.now() - started, ...out, cpuSeconds: cpu });
        });
      });
    },
    async heapMb() {
      const text = await metricsText();
      if (text === undefined) return undefined;
      const families = parsePrometheusStrict(text);
      const used = sampleValue(families, 'nodejs_heap_size_used_bytes');
      const total = sampleValue(families, 'nodejs_heap_size_total_bytes');
      // By space too: the young generation (new) grows and shrinks with the allocation rate, the old one with what survives;
      // large objects (a big map's table, a long array) are apart from the old space.
      const space = (name: string, space: string) => (sampleValue(families, name, { space }) ?? 0) / 2 ** 20;
      return used === undefined || total === undefined
        ? undefined
        : {
            used: used / 2 ** 20,
            total: total / 2 ** 20,
            newTotal: space('nodejs_heap_space_size_total_bytes', 'new'),
            oldUsed: space('nodejs_heap_space_size_used_bytes', 'old'),
            oldTotal: space('nodejs_heap_space_size_total_bytes', 'old'),
            largeUsed: space('nodejs_heap_space_size_used_bytes', 'large_object'),
          };
    },
    async logSummary() {
      const text = existsSync(logFile) ? await readFile(logFile, 'utf8') : '';
      let warnings = 0;
      let errors = 0;
      const messages = new Map<string, number>();
      for (const line of text.split('\n')) {
        if (!line.startsWith('{')) continue;
        let entry: { level?: number; msg?: string };
        try {
          entry = JSON.parse(line) as { level?: number; msg?: string };
        } catch {
          continue;
        }
        if ((entry.level ?? 0) < 40) continue;
        if ((entry.level ?? 0) >= 50) errors += 1;
        else warnings += 1;
        // Messages without their ids and numbers, so alike ones group.
        const key = String(entry.msg ?? '')
          .replace(/[0-9a-f]{8}-[0-9a-f-]{27}/gi, '…')
          .replace(/\d+/g, 'N')
          .slice(0, 90);
        messages.set(key, (messages.get(key) ?? 0) + 1);
      }
      const top = [...messages.entries()]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 3)
        .map(([message, count]) => `${count.toLocaleString('en-US')}× "${message}"`);
      return { warnings, errors, top };
    },
    async stop(graceMs = 10_000) {
      let graceful = true;
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => {
          graceful = false;
          child.kill('SIGKILL');
        }, graceMs);
        await exited;
        clearTimeout(timer);
      }
      // BENCH_KEEP_DIR=1 keeps serve's folder (store, log, handler calls) for a look afterwards.
      if (process.env.BENCH_KEEP_DIR) process.stderr.write(`bench: kept ${dir}\n`);
      else await rm(dir, { recursive: true, force: true });
      return { graceful };
    },
  };
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL: a fresh schema per serve, dropped after.

/** Upper bounds (ms) of the p50 and p99 of serve's 200 answers, read from its ack-duration histogram's buckets. */
export interface AckQuantiles {
  count: number;
  p50AtMostMs: number;
  p99AtMostMs: number;
  /** Event-loop delay of serve since it started (prom-client's monitor), ms. */
  loopLagP99Ms: number | undefined;
  loopLagMaxMs: number | undefined;
}

/**
 * `since`: an earlier `/metrics` text of the same serve; the quantiles are then of the answers
 * between the two (the histogram's counts subtracted), e.g. a load's window without its warm-up.
 * The event-loop figures are always since the scrape before `metrics` (prom-client resets them).
 */
export function ackQuantiles(metrics: string, since?: string): AckQuantiles | undefined {
  const families = parsePrometheusStrict(metrics);
  const ackBuckets = (of: Map<string, PromFamily>) =>
    (of.get('checkout_kit_webhook_ack_duration_seconds')?.samples ?? [])
      .filter((sample) => sample.name.endsWith('_bucket') && sample.labels.status === '200')
      .map((sample) => ({ le: Number(sample.labels.le?.replace('+Inf', 'Infinity')) * 1000, count: sample.value }))
      .sort((a, b) => a.le - b.le);
  const earlier = since === undefined ? [] : ackBuckets(parsePrometheusStrict(since));
  const buckets = ackBuckets(families).map((bucket) => ({ le: bucket.le, count: bucket.count - (earlier.find((e) => e.le === bucket.le)?.count ?? 0) }));
  const count = buckets.at(-1)?.count ?? 0;
  if (count === 0) return undefined;
  const atMost = (q: number) => buckets.find((bucket) => bucket.count >= q * count)!.le;
  const ms = (name: string) => {
    const value = sampleValue(families, name);
    return value === undefined ? undefined : value * 1000;
  };
  return {
    count,
    p50AtMostMs: atMost(0.5),
    p99AtMostMs: atMost(0.99),
    loopLagP99Ms: ms('nodejs_eventloop_lag_p99_seconds'),
    loopLagMaxMs: ms('nodejs_eventloop_lag_max_seconds'),
  };
}

/** `url` with `?schema=name` (the way CHECKOUT_STORE picks a schema, src/store/postgres/postgres-store.ts). */
export function withSchema(url: string, schema: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set('schema', schema);
  return parsed.href;
}

/** Drop the schema (and what serve created in it). */
export async function dropSchema(url: string, schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}

/** Fail early, with a clear message, when PostgreSQL is not there. */
export async function checkPostgres(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  await client.connect();
  await client.end();
}

// ---------------------------------------------------------------------------------------------
// Load: signed deliveries, every request signed when it is built (a fresh timestamp).

function signed(delivery: { msgId: string; body: string }) {
  return {
    body: delivery.body,
    headers: { 'content-type': 'application/json', ...signWebhook({ id: delivery.msgId, body: delivery.body, secret: WEBHOOK_SECRET }) },
  };
}

export interface LoadOptions {
  port: number;
  /** The next delivery to send (called once per request). */
  next: () => { msgId: string; body: string };
  /** Run this long… */
  seconds?: number;
  /** …or send exactly this many requests. */
  amount?: number;
  /** Requests per second over all connections (autocannon `overallRate`). */
  overallRate?: number;
  connections?: number;
  /** Per-request timeout, seconds. @default 10 (autocannon's) */
  timeoutSeconds?: number;
}

/**
 * Signed deliveries to `POST /webhooks/checkout` of 127.0.0.1:`port`. `lastResponseAt` is when the
 * last response came (`performance.now()`): autocannon notices the end of an `amount` run only at
 * its next one-second tick, so its own duration rounds a 3.2 s flush up to 4 s.
 */
export function deliver(options: LoadOptions): Promise<autocannon.Result & { lastResponseAt: number }> {
  let lastResponseAt = performance.now();
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url: `http://127.0.0.1:${options.port}${WEBHOOK_PATH}`,
        connections: options.connections ?? CONNECTIONS,
        ...(options.amount !== undefined ? { amount: options.amount } : { duration: options.seconds ?? 5 }),
        ...(options.overallRate !== undefined ? { overallRate: options.overallRate } : {}),
        timeout: options.timeoutSeconds ?? 10,
        requests: [
          {
            method: 'POST',
            setupRequest: (request) => ({ ...request, ...signed(options.next()) }),
            onResponse: () => void (lastResponseAt = performance.now()),
          },
        ],
      },
      (error, result) => (error ? reject(error) : resolve({ ...result, lastResponseAt })),
    );
  });
}

/** What an evenly paced load measured (ms). */
export interface PacedResult {
  answered: number;
  non2xx: number;
  errors: number;
  p50: number;
  p99: number;
  p999: number;
  max: number;
  /** p99 of the deliveries sent in each `windowSeconds` of the load, in order: where in time the tail sits. */
  windowP99: number[];
  /**
   * Every answered delivery: when it was sent (ms after the load began), its latency (ms), and how
   * much of that it waited for one of the `connections` to be free (ms), in answer order.
   */
  samples: Array<{ sentAt: number; ms: number; waitMs: number }>;
}

/**
 * `rate` deliveries a second spread evenly (one every 1/rate s, on up to `connections` keep-alive
 * connections), as a provider sending steadily would. autocannon's `overallRate` is not that: each
 * of its connections sends its share of a second back to back at the start of the second, so the
 * whole second's deliveries arrive as one burst.
 */
export async function pacedDeliver(options: {
  port: number;
  next: () => { msgId: string; body: string };
  seconds: number;
  rate: number;
  connections?: number;
  windowSeconds?: number;
}): Promise<PacedResult> {
  const agent = new Agent({ keepAlive: true, maxSockets: options.connections ?? CONNECTIONS });
  const latencies: number[] = [];
  const samples: PacedResult['samples'] = [];
  const windowMs = (options.windowSeconds ?? 5) * 1000;
  const windows: number[][] = [];
  let non2xx = 0;
  let errors = 0;
  const inflight = new Set<Promise<void>>();
  const post = (delivery: { msgId: string; body: string }) =>
    new Promise<void>((resolve) => {
      const { body, headers } = signed(delivery);
      const started = performance.now();
      let socketAt: number | undefined;
      // The last window ends with the load: a delivery sent in its final moments counts in it.
      const window = (windows[Math.min(Math.floor((started - loadStarted) / windowMs), Math.ceil((options.seconds * 1000) / windowMs) - 1)] ??= []);
      const request = httpRequest(
        {
          host: '127.0.0.1',
          port: options.port,
          path: WEBHOOK_PATH,
          method: 'POST',
          agent,
          headers: { ...headers, 'content-length': Buffer.byteLength(body) },
        },
        (response) => {
          response.resume();
          response.on('end', () => {
            const latency = performance.now() - started;
            latencies.push(latency);
            samples.push({ sentAt: started - loadStarted, ms: latency, waitMs: (socketAt ?? started) - started });
            window.push(latency);
            if ((response.statusCode ?? 0) < 200 || (response.statusCode ?? 0) >= 300) non2xx += 1;
            resolve();
          });
        },
      );
      request.once('socket', () => (socketAt = performance.now()));
      request.on('error', () => {
        errors += 1;
        resolve();
      });
      request.end(body);
    });
  const loadStarted = performance.now();
  let sent = 0;
  for (;;) {
    const elapsed = performance.now() - loadStarted;
    if (elapsed >= options.seconds * 1000) break;
    for (const due = Math.floor((elapsed / 1000) * options.rate); sent < due; sent += 1) {
      const promise = post(options.next());
      inflight.add(promise);
      void promise.then(() => inflight.delete(promise));
    }
    await sleep(1);
  }
  await Promise.all(inflight);
  agent.destroy();
  const at = (p: number) => Math.round(percentile(latencies, p));
  const windowP99 = Array.from(windows, (window) => Math.round(percentile(window ?? [], 99)));
  return { answered: latencies.length, non2xx, errors, p50: at(50), p99: at(99), p999: at(99.9), max: at(100), windowP99, samples };
}

/** Deliveries taken in order from `list` (wrapping around if autocannon asks for more, e.g. after a timeout). */
export function fromList(list: readonly Delivery[]): () => Delivery {
  let i = 0;
  return () => list[i++ % list.length]!;
}

/** `n` as `1,234`. */
export const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** Non-2xx and errors of a load (autocannon's, or `pacedDeliver`'s), as a note fragment (empty when none). */
export function failures(result: { non2xx: number; errors: number; timeouts?: number }): string[] {
  const notes: string[] = [];
  if (result.non2xx > 0) notes.push(`${fmt(result.non2xx)} non-2xx`);
  if (result.errors > 0) notes.push(`${fmt(result.errors)} errors${result.timeouts === undefined ? '' : ` (${fmt(result.timeouts)} timeouts)`}`);
  return notes;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

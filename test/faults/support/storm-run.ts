/**
 * A crash storm, shared by the embedded and the PostgreSQL scenario: the real sandbox (dropping,
 * duplicating and reordering webhooks) delivers a few thousand payment events to real `serve`
 * processes, which are SIGKILLed at random moments (some of them inside a handler, some inside one
 * running longer than a third of the 30 s dispatch lease) and restarted on the same store; then
 * deliveries stop, `reconcile --older-than 0` runs, and the figures are counted from what the
 * sandbox, the store and the handlers recorded.
 *
 * With `reconcileKills`, the reconcile loop's passes are SIGKILLed too, that many times, each
 * while it holds the reconcile lock (its processes record their lock calls: support/store-calls.ts),
 * that is mid-pass: its lock is then held until its TTL runs out, and its leases until theirs.
 *
 * The fulfillment lease is 5 minutes (FulfillmentEngine's leaseMs; no CLI setting changes it): a
 * run whose process was killed inside the handler is taken over only once it runs out. Rather
 * than wait for that, the final reconcile runs under `faketime` with its clock moved just past the
 * last such lease (at most 285 s, so the sandbox still accepts its request signatures, 300 s
 * tolerance) — exactly what a cron reconcile a few minutes later does. Without faketime the test
 * waits for the lease in real time. The shift is always below the 5 minute lease, so a run leased
 * by a live process (its handlers take at most 15 s) is never taken from it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SandboxEvent } from '../../../src/sandbox/index.js';
import type { Store, StoredEvent, Run } from '../../../src/store/index.js';
import { freePort } from '../../support/ports.js';
import { tempDir } from '../../support/temp-dirs.js';
import { createRng } from '../../../src/sandbox/webhooks/faults.js';
import { RECONCILE_LOCK } from '../../../src/reconcile/index.js';
import { cpuSeconds, hasFaketime, sleep, waitForOutput, type Proc, type Procs } from './procs-children.js';
import type { StoreCall } from './store-calls.js';
import { storeErrorLines } from './store-errors.js';
import { openStarts, readHandlerLog, stormFigures, type Kill, type StormFigures } from './storm-figures.js';
import { DeliveryLog, getJson, readSandboxState, startSandboxProcess, waitForDeliveriesIdle, type RunningSandbox } from './storm-sandbox.js';
import { planPayments, runWorkload, type WorkloadResult } from './storm-workload.js';

export const STORM_HANDLERS = fileURLToPath(new URL('./storm-fulfillment.ts', import.meta.url));
const STORE_CALLS = fileURLToPath(new URL('./store-calls.ts', import.meta.url));
/** How long a killed pass's reconcile lock outlives it at most: reconcile's lock TTL (lockTtlMs' default, src/reconcile/reconcile-options.ts). */
const RECONCILE_LOCK_TTL_MS = 120_000;

/** Largest clock shift for the final reconcile: under the sandbox's 300 s request-signature tolerance. */
const MAX_SHIFT_S = 285;

export interface StormConfig {
  /** CHECKOUT_STORE of every process. */
  store: string;
  /** `serve` processes (each gets every event: one --webhook-url per receiver). */
  receivers: number;
  /** Run `reconcile` in a loop during the storm, this long apart. */
  reconcileEveryMs?: number | undefined;
  /** SIGKILL a pass of the reconcile loop this many times, each while it holds the reconcile lock. @default 0 */
  reconcileKills?: number | undefined;
  events: number;
  kills: number;
  seed: number;
  /** CHECKOUT_DISPATCH_CONCURRENCY of every `serve`. @default 32 */
  dispatchConcurrency?: number | undefined;
  procs: Procs;
  /** The store as the test process reads it (runs and events), not yet opened: runStorm opens and closes it. */
  readStore: () => Store;
  log?: (line: string) => void;
}

export interface StormOutcome extends StormFigures {
  /** Extra figures and facts for the report line. */
  info: Record<string, number | string | boolean>;
  workload: WorkloadResult;
  reconciles: Array<{ code: number | null; summary: Record<string, unknown> | undefined; shift: number; stderr: string }>;
  loopReconciles: Array<{ code: number | null; summary: Record<string, unknown> | undefined; killed: boolean }>;
  serveErrors: string[];
  storeErrors: string[];
}

interface Slot {
  index: number;
  port: number;
  proc: Proc | undefined;
}

const parseJson = (text: string): Record<string, unknown> | undefined => {
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return undefined;
  }
};

/** Set when the storm ends (normally or not): every loop stops, nothing is restarted. */
interface Control {
  aborted: boolean;
  cleanups: Array<() => Promise<unknown>>;
}

/** The lines of a STORE_CALLS_LOG so far (a line cut short by a kill is left out). */
function readStoreCalls(file: string): StoreCall[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .flatMap((line) => {
      try {
        return line ? [JSON.parse(line) as StoreCall] : [];
      } catch {
        return [];
      }
    });
}

export async function runStorm(config: StormConfig): Promise<StormOutcome> {
  const control: Control = { aborted: false, cleanups: [] };
  try {
    return await storm(config, control);
  } finally {
    control.aborted = true;
    for (const cleanup of control.cleanups) await cleanup().catch(() => undefined);
  }
}

async function storm(config: StormConfig, control: Control): Promise<StormOutcome> {
  const started = Date.now();
  const say = config.log ?? ((line: string) => console.log(`  [storm +${((Date.now() - started) / 1000).toFixed(0)} s] ${line}`));
  const { procs } = config;
  const random = createRng(config.seed);
  const shop = await tempDir('ck-storm-shop-');
  const sandboxDir = await tempDir('ck-storm-sandbox-');
  const handlerLog = join(shop, 'handlers.jsonl');

  const sandboxPort = await freePort();
  const slots: Slot[] = [];
  for (let i = 0; i < config.receivers; i++) {
    let port = await freePort();
    while (port === sandboxPort || slots.some((slot) => slot.port === port)) port = await freePort();
    slots.push({ index: i, port, proc: undefined });
  }
  const webhookUrls = slots.map((slot) => `http://127.0.0.1:${slot.port}/webhooks/checkout`);
  const sandboxFlags = { port: sandboxPort, dataDir: sandboxDir, seed: config.seed };
  let sandbox: RunningSandbox = await startSandboxProcess(procs, {
    ...sandboxFlags,
    webhookUrls,
    faults: ['--drop', '0.1', '--duplicate', '0.2', '--reorder'],
  });
  const creds = sandbox.credentials;
  const env: NodeJS.ProcessEnv = {
    CHECKOUT_BASE_URL: sandbox.url,
    CHECKOUT_API_KEY: creds.test.merchant.apiKey,
    CHECKOUT_SIGNING_SECRET: creds.test.merchant.signingSecret,
    CHECKOUT_INVOICE_KEY: creds.test.merchant.invoiceKey,
    CHECKOUT_WEBHOOK_SECRET: creds.webhookSecret,
    CHECKOUT_STORE: config.store,
    CHECKOUT_HANDLERS: STORM_HANDLERS,
    CHECKOUT_MAX_RPS: '1000',
    CHECKOUT_DISPATCH_CONCURRENCY: String(config.dispatchConcurrency ?? 32),
    STORM_HANDLER_LOG: handlerLog,
    STORM_HANDLER_SEED: String(config.seed),
    STORM_HANDLER_PROFILE: 'storm',
    LOG_LEVEL: 'warn',
  };

  const servePids: number[] = [];
  const serveErrors: string[] = [];
  /** Lines any serve or reconcile printed about the store itself failing (support/store-errors.ts). */
  const storeErrors: string[] = [];
  /** Serves being stopped on purpose (SIGKILL by the killer, SIGTERM at the end). */
  const stopping = new Set<number>();
  const startServe = async (slot: Slot) => {
    if (control.aborted) throw new Error('the storm was stopped');
    const proc = procs.cli(`serve#${slot.index}`, ['serve', '--port', String(slot.port)], { cwd: shop, env });
    slot.proc = proc;
    servePids.push(proc.pid);
    void proc.exited.then(({ signal }) => {
      // Anything a serve printed at error level, killed or not, goes into the report.
      for (const line of proc.stderr().split('\n')) if (/"level":(50|60)/.test(line)) serveErrors.push(line.slice(0, 400));
      storeErrors.push(...storeErrorLines(proc.stderr()));
      if (!stopping.has(proc.pid)) serveErrors.push(`serve pid ${proc.pid} exited by itself (${signal ?? 'code'}): ${proc.stderr().slice(-500)}`);
    });
    await waitForOutput(proc, /checkout-kit serve listening on/, 120_000);
  };
  await Promise.all(slots.map(startServe));
  say(
    `sandbox ${sandbox.url}, ${slots.length} serve(s) up on ${config.store.startsWith('file:') ? 'the embedded store' : 'PostgreSQL'} after ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );

  const deliveries = new DeliveryLog(() => sandbox.url);
  deliveries.start(5_000);
  control.cleanups.push(() => deliveries.stop());

  // The buyers.
  const plans = planPayments(config.events, random, `storm${config.seed}`);
  let workloadDone = false;
  const progress = { done: 0 };
  const workloadStarted = Date.now();

  // Reconcile from "cron", during the storm.
  let loopsStop = false;
  const loopReconciles: StormOutcome['loopReconciles'] = [];
  control.cleanups.push(async () => {
    loopsStop = true;
    await reconcileLoop;
  });
  // Each pass records its lock calls, so that the reconcile killer can strike while one holds the lock.
  const lockCalls = join(shop, 'reconcile-lock-calls.jsonl');
  const loopEnv = { ...env, STORE_CALLS_LOG: lockCalls, STORE_CALLS_METHODS: 'acquireLock,releaseLock' };
  let loopPass: Proc | undefined;
  const reconcileKills: Kill[] = [];
  const reconcileLoop = (async () => {
    if (!config.reconcileEveryMs) return;
    while (!loopsStop && !control.aborted) {
      // Once the buyers are done, a pass finds little to do and holds the lock for milliseconds, too
      // briefly for the killer to strike while it does: while kills are owed, such a pass holds it
      // for 3 s after taking it, as a pass waiting on a slow service would.
      const owed = workloadDone && reconcileKills.length < (config.reconcileKills ?? 0);
      const proc = procs.cli('reconcile-loop', ['reconcile', '--json', '--older-than', '1s'], {
        cwd: shop,
        env: owed ? { ...loopEnv, STORE_CALLS_HOLD_LOCK_MS: '3000' } : loopEnv,
        wholeStdout: true,
        preload: [STORE_CALLS],
      });
      loopPass = proc;
      const timer = setTimeout(() => proc.child.kill('SIGKILL'), 180_000);
      const { code, signal } = await proc.exited;
      clearTimeout(timer);
      loopReconciles.push({ code, summary: parseJson(proc.stdout()), killed: signal === 'SIGKILL' });
      storeErrors.push(...storeErrorLines(proc.stderr()));
      const until = Date.now() + config.reconcileEveryMs;
      while (!loopsStop && Date.now() < until) await sleep(200);
    }
  })();
  // The reconcile killer: once half the buyers' work is done and three passes have worked beside
  // serve (a killed pass's lock keeps the next ones out for up to 2 minutes), a pass that has taken
  // the lock and not given it back is SIGKILLed after a moment (0 to 1.5 s), `reconcileKills` times.
  const holdsLock = (pid: number) => {
    const calls = readStoreCalls(lockCalls).filter((call) => call.pid === pid && call.subject === RECONCILE_LOCK && call.ok);
    return calls.some((call) => call.method === 'acquireLock' && call.value === true) && !calls.some((call) => call.method === 'releaseLock');
  };
  // Its own random numbers: the draws of the workload and the serve killer stay as the seed makes them.
  const reconcileRandom = createRng(config.seed + 1);
  const reconcileKiller = (async () => {
    while (reconcileKills.length < (config.reconcileKills ?? 0) && !loopsStop && !control.aborted) {
      const pass = loopPass;
      const worked = loopReconciles.filter((r) => r.summary?.skipped === false).length;
      if (progress.done < plans.length / 2 || worked < 3 || !pass?.alive() || !holdsLock(pass.pid)) {
        await sleep(100);
        continue;
      }
      await sleep(reconcileRandom() * 1_500);
      if (!pass.alive() || !holdsLock(pass.pid)) continue;
      await procs.kill(pass);
      reconcileKills.push({ pid: pass.pid, at: Date.now() });
    }
  })();
  control.cleanups.push(() => reconcileKiller);

  const workload = runWorkload({
    progress,
    plans,
    sandboxUrl: sandbox.url,
    shopUrls: slots.map((slot) => `http://127.0.0.1:${slot.port}`),
    workers: 12,
    random,
    stepDelayMs: [0, 400],
    createTimeoutMs: 180_000,
  }).finally(() => (workloadDone = true));

  // The killer: `kills` times, SIGKILL a serve and restart it on the same store after a short
  // pause, spread over the buyers' work (the time left, as their progress so far predicts it,
  // shared among the kills left; 1.5 to 5 s apart once they are done). Every other kill waits (at most 30 s: a loaded machine restarts serves slowly) for a
  // handler of at least 1 s — preferably one over 10 s — to be running in the victim, and strikes
  // while it runs.
  const kills: Kill[] = [];
  const killer = (async () => {
    for (let n = 0; n < config.kills && !control.aborted; n++) {
      const slot = slots[n % slots.length]!;
      const victim = slot.proc!;
      const elapsed = Date.now() - workloadStarted;
      const left = workloadDone || progress.done === 0 ? 0 : (elapsed * (plans.length - progress.done)) / progress.done;
      const gap = left > 0 ? (left / (config.kills - n)) * (0.5 + random()) : 1_500 + random() * 3_500;
      await sleep(Math.min(Math.max(gap - 2_000, 1_500), 30_000));
      if (n % 2 === 1) {
        const deadline = Date.now() + 30_000;
        let chosen;
        while (!chosen && Date.now() < deadline) {
          const running = openStarts(readHandlerLog(handlerLog)).filter(
            (line) => line.pid === victim.pid && line.ms >= 1_000 && line.at + line.ms > Date.now() + 600,
          );
          chosen = running.find((line) => line.ms >= 10_000) ?? (Date.now() > deadline - 25_000 ? running[0] : undefined);
          if (!chosen) await sleep(200);
        }
        if (chosen) await sleep(Math.max(0, Math.min(chosen.at + chosen.ms - Date.now() - 500, random() * 4_000)));
      } else {
        await sleep(random() * 4_000);
      }
      stopping.add(victim.pid);
      await procs.kill(victim);
      kills.push({ pid: victim.pid, at: Date.now() });
      await sleep(200 + random() * 2_300);
      await startServe(slot);
    }
  })();

  const [workloadResult] = await Promise.all([workload, killer]);
  say(
    `workload: ${plans.length} payments in ${workloadResult.seconds.toFixed(1)} s (${workloadResult.checkoutRetries} checkout retries); ${kills.length} kills`,
  );

  // Let the sandbox finish (deliver or give up) everything, then stop its deliveries for good:
  // restart it on the same data without --webhook-url.
  const idle = await waitForDeliveriesIdle(deliveries, sandbox.url, webhookUrls, 240_000);
  // On a busy machine the buyers can be done before three passes have worked: the loop goes on
  // (and the killer strikes) until the reconcile kills asked for have happened, for 3 minutes at most.
  const reconcileKillsBy = Date.now() + 180_000;
  while (reconcileKills.length < (config.reconcileKills ?? 0) && Date.now() < reconcileKillsBy && !control.aborted) await sleep(200);
  loopsStop = true;
  await reconcileLoop;
  await reconcileKiller;
  await deliveries.stop();
  await deliveries.poll();
  const sandboxEvents = await getJson<SandboxEvent[]>(`${sandbox.url}/sandbox/events`);
  const sandboxCpuS = cpuSeconds(sandbox.proc.pid);
  await procs.stop(sandbox.proc);
  sandbox = await startSandboxProcess(procs, { ...sandboxFlags, webhookUrls: [], faults: [] });
  say(
    `deliveries ${idle.idle ? 'idle' : `NOT idle (${idle.jobs} pending, ${idle.unseen} unseen)`} after ${((Date.now() - started) / 1000).toFixed(1)} s; sandbox restarted without webhooks`,
  );

  const store = config.readStore();
  await store.open();
  try {
    const livePids = () => slots.map((slot) => slot.proc!.pid);
    const allKills = [...kills, ...reconcileKills];
    const killedPids = new Set(allKills.map((kill) => kill.pid));
    const ownerPid = (run: Run) => Number(run.owner?.split(':').at(-2));
    const listRuns = () => store.listRuns({ limit: 10_000_000 });

    // Handlers still running in live serves finish (at most 15 s each), and events still leased by
    // a killed serve are taken over by a live one once their 30 s dispatch lease runs out.
    const waitQuiet = async (what: string, timeoutMs: number) => {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const running = openStarts(readHandlerLog(handlerLog)).filter((line) => livePids().includes(line.pid));
        const events = (await listRuns()).filter((run) => run.kind === 'event' && run.status !== 'done' && run.status !== 'failed');
        if (running.length === 0 && events.length === 0) return;
        if (Date.now() > deadline) {
          say(`${what}: still ${running.length} handler(s) running and ${events.length} event(s) undispatched after ${timeoutMs} ms`);
          return;
        }
        await sleep(1_000);
      }
    };
    await waitQuiet('before reconcile', 120_000);

    // The final reconcile passes, with the clock just past the leases the killed serves held.
    const reconciles: StormOutcome['reconciles'] = [];
    const faketime = hasFaketime();
    for (let pass = 0; pass < 2; pass++) {
      const stranded = (await listRuns()).filter(
        (run) => run.kind === 'fulfillment' && run.status === 'running' && killedPids.has(ownerPid(run)) && run.leaseUntil,
      );
      // Past the leases killed processes held, and past the reconcile lock a killed pass held.
      const lockHeldUntil = reconcileKills.map((kill) => kill.at + RECONCILE_LOCK_TTL_MS);
      let shift = Math.max(
        0,
        ...[...stranded.map((run) => Date.parse(run.leaseUntil!)), ...lockHeldUntil].map((until) => Math.ceil((until - Date.now()) / 1000) + 3),
      );
      if (shift > 0 && (!faketime || shift > MAX_SHIFT_S)) {
        const wait = faketime ? shift - MAX_SHIFT_S : shift;
        say(`waiting ${wait} s of real time for the leases of killed serves to run out${faketime ? '' : ' (no faketime here)'}`);
        await sleep(wait * 1000);
        shift = faketime ? MAX_SHIFT_S : 0;
      }
      const result = await procs.run('reconcile-final', ['reconcile', '--json', '--older-than', '0'], {
        cwd: shop,
        env,
        timeoutMs: 240_000,
        faketime: shift > 0 ? `+${shift}` : undefined,
      });
      reconciles.push({ code: result.code, summary: parseJson(result.stdout), shift, stderr: result.stderr.slice(-2000) });
      storeErrors.push(...storeErrorLines(result.stderr));
      say(
        `reconcile pass ${pass + 1} (clock +${shift} s, ${stranded.length} run(s) stranded by kills${lockHeldUntil.length > 0 ? ", past a killed pass's lock" : ''}): exit ${result.code} ${JSON.stringify(parseJson(result.stdout) ?? result.stdout.slice(0, 300))}`,
      );
      await waitQuiet(`after reconcile ${pass + 1}`, 60_000);
    }

    // Stop everything, then count.
    for (const slot of slots) {
      stopping.add(slot.proc!.pid);
      const { signal, code } = await procs.stop(slot.proc!);
      if (code !== 0) serveErrors.push(`serve pid ${slot.proc!.pid} stopped with ${signal ?? code}`);
    }
    const eventsCli = await procs.run('events-list', ['events', 'list', '--limit', '100000000', '--json'], { cwd: shop, env, timeoutMs: 120_000 });
    if (eventsCli.code !== 0) throw new Error(`checkout-kit events list failed (${eventsCli.code}): ${eventsCli.stderr}`);
    const stored = JSON.parse(eventsCli.stdout) as Array<StoredEvent & { run?: Run }>;
    const runs = await listRuns();
    await procs.stop(sandbox.proc);
    const final = await readSandboxState(sandboxDir);

    const result = stormFigures({
      sandboxEvents,
      deliveries: deliveries.all(),
      stored,
      runs,
      lines: readHandlerLog(handlerLog),
      kills: allKills,
      payments: final.payments,
    });
    const sum = (key: string) => [...reconciles, ...loopReconciles].reduce((total, r) => total + (Number(r.summary?.[key]) || 0), 0);
    const info = {
      seconds: Math.round((Date.now() - started) / 1000),
      seed: config.seed,
      receivers: config.receivers,
      restarts: servePids.length - slots.length,
      deliveriesIdle: idle.idle,
      checkoutRetries: workloadResult.checkoutRetries,
      notCreated: workloadResult.notCreated.length,
      stepErrors: workloadResult.stepErrors.length,
      serveKills: kills.length,
      reconcileKills: reconcileKills.length,
      loopReconciles: loopReconciles.length,
      loopReconcilesSkipped: loopReconciles.filter((r) => r.summary?.skipped === true).length,
      loopReconcilesFailed: loopReconciles.filter((r) => !r.killed && r.code !== 0).length,
      reconcileMissedByWebhooks: sum('missedByWebhooks'),
      reconcileFulfilled: sum('fulfilled'),
      reconcileRetried: sum('retried'),
      finalClockShiftS: Math.max(...reconciles.map((r) => r.shift)),
      serveErrorLines: serveErrors.length,
      storeErrorLines: storeErrors.length,
      sandboxCpuS,
    };
    return { ...result, info, workload: workloadResult, reconciles, loopReconciles, serveErrors, storeErrors };
  } finally {
    await store.close();
  }
}

/**
 * Crash storm on the embedded store. The real `checkout-kit sandbox`
 * (--drop 0.1 --duplicate 0.2 --reorder) sends about FAULTS_STORM_EVENTS (1,000) payment events
 * to the real `checkout-kit serve` on CHECKOUT_STORE=file:<tmp> (SQLite), whose handlers take 0 to
 * 15 s (some over 10 s, a third of the 30 s dispatch lease) and log their start and end, while
 * `checkout-kit reconcile` runs every 3 s on the same store. serve is SIGKILLed at least
 * FAULTS_STORM_KILLS (6) times — at random moments, and every other time while one of its handlers
 * runs — and restarted on the same store; FAULTS_STORM_RECONCILE_KILLS (2) passes of reconcile are
 * SIGKILLed while they hold the reconcile lock. Then the sandbox's deliveries stop and `checkout-kit
 * reconcile --older-than 0` runs twice (see support/storm-run.ts for why it runs with its clock
 * moved past the 5 minute fulfillment lease and the reconcile lock of a killed pass).
 *
 * Figures asserted: acknowledged events missing from the store, events stored twice, paid payments
 * (per the sandbox's final state) without a completed paid/overpaid handler, handler completions
 * beyond one per payment and outcome, handler starts without an end that no kill explains, and
 * lines from any serve or reconcile telling of the store itself failing (SQLITE_BUSY, a locked or
 * damaged file) — all 0.
 *
 * Checked to fail when a protection is removed (each mutation applied to a copy of the repo, never
 * to src/ here; FAULTS_STORM_EVENTS=400 FAULTS_STORM_KILLS=4):
 * - leases ignored (statements.ts `claimableAt`: a running run always claimable) →
 *   completionsBeyondOneUnexplained=25;
 * - the receiver acknowledges first and stores 300 ms later (handle-delivery.ts) → ackedMissing=18;
 * - a dead worker's run never taken over (`claimableAt`: running → never) → paidWithoutHandler=9,
 *   closedWithoutHandler=5, fulfilmentRunsNotDone=14, eventRunsNotDone=14;
 * - reconcile doing nothing (reconcile.ts returns at once) → paidWithoutHandler=16,
 *   closedWithoutHandler=9, fulfilmentRunsNotDone=22.
 * What it cannot see: a missing fsync (SIGKILL keeps the page cache; only a power cut would lose it).
 */
import { randomInt } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/store/index.js';
import { eventually, freePort } from '../support/ports.js';
import { createdPaymentId, postCheckout } from '../support/post-checkout.js';
import { removeTempDirs, tempDir } from '../support/temp-dirs.js';
import { Procs, waitForOutput } from './support/procs-children.js';
import { reportFigures, sized } from './support/report.js';
import { expectStormHeld, readHandlerLog } from './support/storm-figures.js';
import { runStorm, STORM_HANDLERS } from './support/storm-run.js';
import { postJson, startSandboxProcess } from './support/storm-sandbox.js';

const procs = new Procs();
afterAll(async () => {
  await procs.killAll();
  await removeTempDirs();
});

// 1,000 by default, not the 2,000 the issue suggests: the sandbox rewrites its whole state file on
// every change and every delivery attempt (src/sandbox/state.ts commit, src/sandbox/start.ts
// `record`), so its cost grows with the square of the events — 2,000 events took 288 s here, 169 s
// of it sandbox CPU; 1,000 take about 95 s. FAULTS_STORM_EVENTS=2000 for the full size.
const EVENTS = sized('FAULTS_STORM_EVENTS', 1_000);
const KILLS = sized('FAULTS_STORM_KILLS', 6);
const RECONCILE_KILLS = sized('FAULTS_STORM_RECONCILE_KILLS', 2);
const SEED = sized('FAULTS_STORM_SEED', randomInt(1, 2 ** 31));

describe('crash storm on the embedded store (real sandbox, real serve and reconcile, SIGKILLs)', () => {
  it(`${EVENTS} events with drops, duplicates and reordering, serve SIGKILLed ${KILLS}+ times and reconcile mid-pass: nothing acknowledged is lost, nothing is stored or fulfilled twice, every paid payment is fulfilled`, async () => {
    const storeDir = await tempDir('ck-storm-store-');
    const outcome = await runStorm({
      store: `file:${storeDir}`,
      receivers: 1,
      events: EVENTS,
      kills: KILLS,
      seed: SEED,
      reconcileEveryMs: 3_000,
      reconcileKills: RECONCILE_KILLS,
      procs,
      readStore: () => new SqliteStore({ dir: storeDir, readonly: true }),
    });
    expectStormHeld('crash storm (embedded)', outcome, KILLS);
    expect(outcome.info.loopReconciles).toBeGreaterThan(0);
    // The second kill comes only once the first one's lock has run out (2 minutes), if the storm lasts.
    expect(outcome.info.reconcileKills).toBeGreaterThan(0);
    expect(outcome.storeErrors, 'serve or reconcile told of the store failing').toEqual([]);
  }, 900_000);
});

/**
 * Found by the storm's shutdown path: `serve` stopped gracefully (SIGTERM) while its
 * due-run sweep runs a handler. serve-app.ts stops the sweep's timer on close but does not wait for
 * the sweep in progress (src/timers/every.ts returns a stop that only clears the interval), and
 * `serve` then closes the store: the handler returns into a closed store, its completion cannot be
 * stored ("The store … is closed", 6 tries), the run stays leased, and the handler is called again
 * once the lease runs out — a second call after a clean stop, not a crash.
 */
describe('serve stopped with SIGTERM while its due-run sweep runs a handler', () => {
  it('waits for the handler and stores its completion (the handler is not left to run again)', async () => {
    const dir = tempDir;

    const sandbox = await startSandboxProcess(procs, { port: await freePort(), dataDir: await dir('ck-due-sandbox-'), webhookUrls: [], faults: [], seed: 1 });
    const shop = await dir('ck-due-shop-');
    const log = join(shop, 'handlers.jsonl');
    const release = join(shop, 'release');
    const merchant = sandbox.credentials.test.merchant;
    const env = {
      CHECKOUT_BASE_URL: sandbox.url,
      CHECKOUT_API_KEY: merchant.apiKey,
      CHECKOUT_SIGNING_SECRET: merchant.signingSecret,
      CHECKOUT_WEBHOOK_SECRET: sandbox.credentials.webhookSecret,
      CHECKOUT_STORE: `file:${await dir('ck-due-store-')}`,
      CHECKOUT_HANDLERS: STORM_HANDLERS,
      STORM_HANDLER_LOG: log,
      STORM_HANDLER_PROFILE: 'throw-first',
      // The second attempt runs until the test has begun to stop serve.
      STORM_HANDLER_RELEASE: release,
      LOG_LEVEL: 'warn',
    };
    const port = await freePort();
    const serve = procs.cli('serve', ['serve', '--port', String(port)], { cwd: shop, env });
    await waitForOutput(serve, /checkout-kit serve listening on/);

    // A paid payment; the buyer's return runs the paid handler, whose first attempt throws: the
    // retry is due 2 s later, and serve's due-run sweep (every 5 s) runs it.
    const created = await postCheckout(`http://127.0.0.1:${port}`, { orderId: 'due-1', amount: '10.00', email: 'buyer@example.com' });
    expect(created.status).toBe(303);
    const id = createdPaymentId(created);
    expect((await postJson(`${sandbox.url}/sandbox/payments/${id}/deposit`, { amount: '10.00' })).status).toBe(200);
    await fetch(`http://127.0.0.1:${port}/checkout/return?orderId=due-1`, { headers: { accept: 'application/json' } });
    const key = `payment:${id}:paid`;
    await eventually(() => (readHandlerLog(log).some((line) => line.step === 'start' && line.attempt === 2) ? true : undefined), 60_000, 200);
    expect(readHandlerLog(log).map((line) => `${line.step} ${line.attempt}`)).toEqual(['start 1', 'throw 1', 'start 2']);

    // Stop serve gracefully while attempt 2 runs; the handler finishes only once serve is closing
    // (its routes answer 503, or it takes no connection any more).
    const stopping = procs.stop(serve, 60_000);
    await eventually(
      async () => {
        const status = await fetch(`http://127.0.0.1:${port}/healthz`).then(
          (response) => response.status,
          () => 'closed',
        );
        return status === 200 ? undefined : true;
      },
      60_000,
      20,
    );
    await writeFile(release, '');
    const exit = await stopping;
    expect(exit).toEqual({ code: 0, signal: null });
    const runs = await procs.run('runs', ['runs', '--json'], { cwd: shop, env });
    const run = (JSON.parse(runs.stdout) as Array<{ key: string; status: string; attempts: number }>).find((r) => r.key === key);
    const steps = readHandlerLog(log).map((line) => `${line.step} ${line.attempt}`);
    reportFigures('graceful stop during a due run', {
      handlerEnded: steps.includes('end 2'),
      runStatus: run?.status ?? 'missing',
      completionNotStored: steps.includes('end 2') && run?.status !== 'done',
    });
    // The handler finished before serve exited…
    expect(steps).toEqual(['start 1', 'throw 1', 'start 2', 'end 2']);
    // …so its completion must be stored; otherwise it is called again once the 5 minute lease runs out.
    expect(run, serve.stderr().slice(-1500)).toMatchObject({ status: 'done', attempts: 2 });
    await procs.stop(sandbox.proc);
  }, 120_000);
});

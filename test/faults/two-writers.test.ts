/**
 * Two writers and more on ONE embedded store (issue 12, scenario 3). For a fixed time
 * (FAULTS_TWO_WRITERS_SECONDS, 20 s): `checkout-kit serve` under load — signed deliveries sent by
 * the test from a few keep-alive connections as fast as they are answered, new events and
 * byte-identical redeliveries, about payments the test pays at the sandbox meanwhile — while two
 * loops of `checkout-kit reconcile --older-than 0` and a loop of `checkout-kit replay --to <serve>
 * --all` work on the same store folder. Then the receiver drains, and:
 *
 * - lost updates = 0: every acknowledged event is in the store, every event run and handler run is
 *   done, every paid / expired / underpaid payment's handler completed (once);
 * - runs claimed twice = 0: each handler key was started once (the handlers log their starts, and
 *   nothing here crashes or throws, so a second start can only be a second claim).
 *
 * The lock-off proof: `unsafeNoLock` cannot be set from the CLI (openStore omits it on purpose,
 * src/store/open.ts: `Omit<EmbeddedStoreOptions, 'dir' | 'unsafeNoLock'>`, and no CHECKOUT_*
 * variable reaches it — checked by reading open.ts, config/env.ts and runtime.ts). So the same load
 * drives the same parts in this process — createReceiver + attachFulfillment behind a Node http
 * server, two `reconcile()` loops, a replay loop (selectEvents + deliverSigned, as `replay` does),
 * each on its own EmbeddedStore instance of one folder — once with the lock (which must show 0, so
 * the harness itself loses nothing) and once with `{ unsafeNoLock: true }`, which must show lost
 * updates or double claims: the figures above do see the bug. Without the lock, two instances
 * append at the same journal offset; typically a line is overwritten by a shorter one, the folder
 * no longer opens ("damaged line"), and every acknowledged event is lost to a restarted serve
 * (lostAcked = acked, storeUnreadable = 1), sometimes with a run claimed and completed twice.
 * Also checked on a copy of the repo with DirLock disabled for every process (dir-lock.ts): the
 * process-level test above then fails the same way (storeUnreadable=1, lostAcked=981 of 981).
 */
import { randomInt } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/ports.js';
import { removeTempDirs, tempDir } from '../support/temp-dirs.js';
import { createRng } from '../../src/sandbox/webhooks/faults.js';
import { Procs, sleep } from './support/procs-children.js';
import { cliTopology, createPayments, inProcessTopology, readStore, runLoad, waitForDrain, writersFigures, type Topology } from './support/procs-writers.js';
import { reportFigures, sized } from './support/report.js';
import { startSandboxProcess, type RunningSandbox } from './support/storm-sandbox.js';

const SECONDS = sized('FAULTS_TWO_WRITERS_SECONDS', 20);
const IN_PROCESS_SECONDS = sized('FAULTS_TWO_WRITERS_INPROC_SECONDS', 10);
/** Rounds of the no-lock control before it counts as "nothing went wrong". */
const NO_LOCK_ROUNDS = 3;
const PAYMENTS = sized('FAULTS_TWO_WRITERS_PAYMENTS', 120);
const CONNECTIONS = sized('FAULTS_TWO_WRITERS_CONNECTIONS', 4);
const SEED = sized('FAULTS_TWO_WRITERS_SEED', randomInt(1, 2 ** 31));

const procs = new Procs();
let sandbox: RunningSandbox;

beforeAll(async () => {
  const dir = await tempDir('ck-writers-sandbox-');
  // The service for confirm reads and reconcile polls; no --webhook-url: the test sends the deliveries.
  sandbox = await startSandboxProcess(procs, { port: await freePort(), dataDir: dir, webhookUrls: [], faults: [], seed: SEED });
});
const topologies: Topology[] = [];
afterEach(async () => {
  for (const topology of topologies.splice(0)) await topology.dispose();
});
afterAll(async () => {
  await procs.killAll();
  await removeTempDirs();
});

/** Run the load against a topology for `seconds`, drain, and count. */
async function scenario(name: string, seconds: number, payments: number, start: (storeDir: string) => Promise<Topology>) {
  const random = createRng(SEED + name.length);
  const storeDir = await tempDir('ck-writers-store-');
  const planned = await createPayments(sandbox, payments, random);
  const topology = await start(storeDir);
  topologies.push(topology);
  const load = await runLoad({ receiverUrl: topology.receiverUrl, sandboxUrl: sandbox.url, secret: sandbox.credentials.webhookSecret, payments: planned, seconds, connections: CONNECTIONS, random });
  const loops = await topology.stopLoops();
  const drained = await waitForDrain(storeDir, 120_000);
  await sleep(500);
  await topology.stop();
  const read = await readStore(storeDir);
  const { figures, examples } = writersFigures({ storeDir, load, loops, lines: topology.handlerLines(), read });
  reportFigures(name, { ...figures, drained, seed: SEED });
  return { figures, examples, drained };
}

const ZERO = {
  storeUnreadable: 0,
  lostAcked: 0,
  lostAckedInFiles: 0,
  eventRunsNotDone: 0,
  fulfilmentRunsNotDone: 0,
  missingHandlers: 0,
  unexpectedHandlers: 0,
  claimedTwice: 0,
  completedTwice: 0,
};
const failures = (figures: Record<string, number | string>) => Object.fromEntries(Object.keys(ZERO).map((key) => [key, figures[key]]));

describe('two writers and more on one embedded store', () => {
  it(
    `serve under load + two reconcile loops + replay --all for ${SECONDS} s (real processes): nothing lost, no run claimed twice`,
    async () => {
      const { figures, examples, drained } = await scenario('two writers (embedded, processes)', SECONDS, PAYMENTS, async (storeDir) =>
        cliTopology({ procs, sandbox, storeDir, cwd: await tempDir('ck-writers-shop-'), port: await freePort(), seed: SEED }),
      );
      expect(figures.acked).toBeGreaterThan(0);
      expect(figures.reconcilePasses).toBeGreaterThan(0);
      expect(figures.replays).toBeGreaterThan(0);
      expect(drained).toBe(true);
      expect(failures(figures), JSON.stringify(examples)).toEqual(ZERO);
    },
    600_000,
  );

  it(
    `the same parts in one process, each on its own EmbeddedStore instance, WITH the lock, for ${IN_PROCESS_SECONDS} s: nothing lost, no run claimed twice (the harness is sound)`,
    async () => {
      const { figures, examples, drained } = await scenario('two writers (embedded, in-process, lock)', IN_PROCESS_SECONDS, Math.ceil(PAYMENTS / 2), (storeDir) =>
        inProcessTopology({ sandbox, storeDir, unsafeNoLock: false }),
      );
      expect(figures.acked).toBeGreaterThan(0);
      expect(drained).toBe(true);
      expect(failures(figures), JSON.stringify(examples)).toEqual(ZERO);
    },
    600_000,
  );

  it(
    `the same parts WITHOUT the lock (unsafeNoLock), for ${IN_PROCESS_SECONDS} s a round (up to ${NO_LOCK_ROUNDS}): the figures see lost updates or double claims`,
    async () => {
      // A race, so a round can come out clean by luck (CI saw it once in many runs): the harness
      // must see breakage in some round, not in the first.
      const rounds: Array<Record<string, number | string>> = [];
      let broken = 0;
      for (let round = 1; round <= NO_LOCK_ROUNDS && broken === 0; round += 1) {
        const { figures, examples } = await scenario(`two writers (embedded, in-process, NO lock, round ${round})`, IN_PROCESS_SECONDS, Math.ceil(PAYMENTS / 2), (storeDir) =>
          inProcessTopology({ sandbox, storeDir, unsafeNoLock: true }),
        );
        console.log(`  [two writers, no lock, round ${round}] examples:`, JSON.stringify(examples));
        // The round ran: deliveries went out, and were acknowledged unless the very first
        // colliding writes left the store unreadable (CI saw acked=0 with the journal damaged at
        // byte 256: the breakage this test looks for, before any ack).
        expect(figures.sent).toBeGreaterThan(0);
        if (Number(figures.storeUnreadable) === 0) expect(figures.acked).toBeGreaterThan(0);
        rounds.push(figures);
        broken = figures.storeUnreadable + figures.lostAcked + figures.claimedTwice + figures.completedTwice + figures.missingHandlers;
      }
      expect(broken, `without the lock nothing went wrong in ${rounds.length} rounds: ${JSON.stringify(rounds)}`).toBeGreaterThan(0);
    },
    900_000,
  );
});

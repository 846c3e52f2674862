/**
 * Two writers and more on ONE embedded store. For a fixed time
 * (FAULTS_TWO_WRITERS_SECONDS, 20 s): `checkout-kit serve` under load — signed deliveries sent by
 * the test from a few keep-alive connections as fast as they are answered, new events and
 * byte-identical redeliveries, about payments the test pays at the sandbox meanwhile — while two
 * loops of `checkout-kit reconcile --older-than 0` and a loop of `checkout-kit replay --to <serve>
 * --all` work on the same store folder. Then the receiver drains, and:
 *
 * - lost updates = 0: every acknowledged event is in the store, every event run and handler run is
 *   done, every paid / expired / underpaid payment's handler completed (once);
 * - runs claimed twice = 0: each handler key was started once (the handlers log their starts, and
 *   nothing here crashes or throws, so a second start can only be a second claim);
 * - no store errors: no process printed SQLITE_BUSY, "database is locked" or another failure of the
 *   store itself, and serve answered no delivery 503 store_unavailable.
 *
 * SQLite arbitrates between the processes (one writer at a time, each waiting up to its busy
 * timeout; readers never wait), so there is no lock of checkout-kit's own to turn off here.
 * Checked to fail when a protection is removed (each on a copy of the repo, never on src/ here):
 * - the claim's lease guard (statements.ts `claimableAt`: any running run claimable) →
 *   claimedTwice=30, completedTwice=30;
 * - the busy timeout (sqlite-database.ts: 0 instead of 5000 ms, so a write gives up at once when
 *   another process holds the lock) → storeErrors=361 ("is busy"), answered503=107.
 */
import { randomInt } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../support/ports.js';
import { removeTempDirs, tempDir } from '../support/temp-dirs.js';
import { createRng } from '../../src/sandbox/webhooks/faults.js';
import { Procs } from './support/procs-children.js';
import { cliTopology, createPayments, readStore, runLoad, waitForDrain, writersFigures, type Topology } from './support/procs-writers.js';
import { reportFigures, sized } from './support/report.js';
import { startSandboxProcess, type RunningSandbox } from './support/storm-sandbox.js';

const SECONDS = sized('FAULTS_TWO_WRITERS_SECONDS', 20);
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

/** Run the load for `seconds` against the real processes on a new store, drain, and count. */
async function scenario(name: string) {
  const random = createRng(SEED);
  const storeDir = await tempDir('ck-writers-store-');
  const planned = await createPayments(sandbox, PAYMENTS, random);
  const topology = await cliTopology({ procs, sandbox, storeDir, cwd: await tempDir('ck-writers-shop-'), port: await freePort(), seed: SEED });
  topologies.push(topology);
  const load = await runLoad({
    receiverUrl: topology.receiverUrl,
    sandboxUrl: sandbox.url,
    secret: sandbox.credentials.webhookSecret,
    payments: planned,
    seconds: SECONDS,
    connections: CONNECTIONS,
    random,
  });
  const loops = await topology.stopLoops();
  const drained = await waitForDrain(storeDir, 120_000);
  await topology.stop();
  const read = await readStore(storeDir);
  // What the product shows, from a process of its own once everything has stopped.
  const listed = await procs.run('events-list', ['events', 'list', '--json', '--limit', '100000000'], {
    cwd: storeDir,
    env: { CHECKOUT_STORE: `file:${storeDir}`, LOG_LEVEL: 'warn' },
  });
  expect(listed.code, listed.stderr).toBe(0);
  const listedByCli = new Set((JSON.parse(listed.stdout) as Array<{ id: string }>).map((event) => event.id));
  const { figures, examples } = writersFigures({ load, loops, lines: topology.handlerLines(), read, listedByCli, storeErrors: topology.storeErrors() });
  reportFigures(name, { ...figures, drained, seed: SEED });
  return { figures, examples, drained };
}

const ZERO = {
  storeUnreadable: 0,
  lostAcked: 0,
  lostAckedToCli: 0,
  storeErrors: 0,
  answered503: 0,
  eventRunsNotDone: 0,
  fulfilmentRunsNotDone: 0,
  missingHandlers: 0,
  unexpectedHandlers: 0,
  claimedTwice: 0,
  completedTwice: 0,
};
const failures = (figures: Record<string, number | string>) => Object.fromEntries(Object.keys(ZERO).map((key) => [key, figures[key]]));

describe('two writers and more on one embedded store', () => {
  it(`serve under load + two reconcile loops + replay --all for ${SECONDS} s (real processes): nothing lost, no run claimed twice`, async () => {
    const { figures, examples, drained } = await scenario('two writers (embedded, processes)');
    expect(figures.acked).toBeGreaterThan(0);
    expect(figures.reconcilePasses).toBeGreaterThan(0);
    expect(figures.replays).toBeGreaterThan(0);
    expect(drained).toBe(true);
    expect(failures(figures), JSON.stringify(examples)).toEqual(ZERO);
  }, 600_000);
});

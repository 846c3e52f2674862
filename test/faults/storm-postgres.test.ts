/**
 * Crash storm on PostgreSQL: the storm of storm.test.ts with two `serve`
 * processes on different ports sharing one fresh schema (CHECKOUT_STORE=postgres://…?schema=…, the
 * `schema` query parameter src/store/postgres/postgres-store.ts reads), the sandbox delivering every
 * event to both (one --webhook-url each: every event reaches each receiver, so each event is also a
 * duplicate across receivers), `checkout-kit reconcile` run every 3 s beside them, and the serves
 * SIGKILLed in turn and restarted. Same figures, same assertions.
 *
 * Checked to fail with the lease check removed from the claim (statements.ts `claimableAt`: any
 * running run claimable; on a copy of the repo): completionsBeyondOneUnexplained=61.
 *
 * 800 events by default (every event goes to two receivers, so the sandbox records twice the
 * delivery attempts; see storm.test.ts on its cost); FAULTS_STORM_PG_EVENTS or FAULTS_STORM_EVENTS.
 *
 * Needs a PostgreSQL server: DATABASE_URL, else postgres://postgres@127.0.0.1:5432/test. Skipped
 * (with a message saying so) when it cannot be reached.
 */
import { randomBytes, randomInt } from 'node:crypto';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log/index.js';
import { PostgresStore } from '../../src/store/postgres/index.js';
import { removeTempDirs } from '../support/temp-dirs.js';
import { Procs } from './support/procs-children.js';
import { sized } from './support/report.js';
import { expectStormHeld } from './support/storm-figures.js';
import { runStorm } from './support/storm-run.js';

const DATABASE = process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const EVENTS = sized('FAULTS_STORM_PG_EVENTS', sized('FAULTS_STORM_EVENTS', 800));
const KILLS = sized('FAULTS_STORM_KILLS', 6);
const SEED = sized('FAULTS_STORM_SEED', randomInt(1, 2 ** 31));
const SCHEMA = `ck_storm_${randomBytes(5).toString('hex')}`;

/** Whether the server answers; the reason when it does not. */
async function reachable(): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: DATABASE, connectionTimeoutMillis: 3_000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return undefined;
  } catch (error) {
    return (error as Error).message;
  } finally {
    await client.end().catch(() => undefined);
  }
}
const unreachable = await reachable();
if (unreachable)
  console.log(`SKIPPED crash storm (PostgreSQL): ${new URL(DATABASE).host} is unreachable (${unreachable}); set DATABASE_URL to a server to run it`);

const procs = new Procs();
afterAll(async () => {
  await procs.killAll();
  await removeTempDirs();
  if (!unreachable) {
    const client = new pg.Client({ connectionString: DATABASE });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS "${SCHEMA}" CASCADE`);
    await client.end();
  }
});

describe.skipIf(unreachable !== undefined)('crash storm on PostgreSQL (two serves on one schema, a reconcile loop, SIGKILLs)', () => {
  it(`${EVENTS} events to each of two receivers with drops, duplicates and reordering, serves SIGKILLed ${KILLS}+ times, reconcile every 3 s: nothing acknowledged is lost, nothing is stored or fulfilled twice, every paid payment is fulfilled`, async () => {
    const url = new URL(DATABASE);
    url.searchParams.set('schema', SCHEMA);
    const outcome = await runStorm({
      store: url.toString(),
      receivers: 2,
      reconcileEveryMs: 3_000,
      events: EVENTS,
      kills: KILLS,
      seed: SEED,
      procs,
      readStore: () => new PostgresStore({ connectionString: DATABASE, schema: SCHEMA, logger: silentLogger }),
    });
    expectStormHeld('crash storm (postgres)', outcome, KILLS);
    expect(outcome.info.loopReconciles).toBeGreaterThan(0);
  }, 900_000);
});

/**
 * Several instances on one database, as merchants who scale out run them: three receiver
 * processes and two reconcilers share a PostgreSQL schema; a sender delivers 5,000 signed events
 * (30% duplicates) spread across the receivers, and one receiver is killed with SIGKILL midway.
 * Handlers INSERT into `handler_calls`, so "exactly once" is counted in the database.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomInt } from 'node:crypto';
import { Agent, request as httpRequest } from 'node:http';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runKeys } from '../../src/runs/index.js';
import type { Payment } from '../../src/schemas/index.js';
import type { Run } from '../../src/store/index.js';
import type { PostgresStore } from '../../src/store/postgres/index.js';
import { signWebhook } from '../../src/webhooks/index.js';
import { samplePayment } from '../support/fixtures.js';
import type { ClusterProcessArgs } from './postgres/cluster-process.js';
import { DATABASE_URL, TestDatabases } from './postgres/test-database.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const MEMBER = fileURLToPath(new URL('./postgres/cluster-process.ts', import.meta.url));
const SECRET = 'whsec_Y2x1c3Rlci10ZXN0LXNlY3JldC0wMTIzNDU2Nzg5';
const LEASE_MS = 2000;
const PAYMENTS = 1000;
const DELIVERIES = 5000;
const DUPLICATE_SHARE = 0.3;
const SENDERS = 24;

if (!DATABASE_URL) {
  console.log(
    'test/store/postgres-cluster.test.ts: SKIPPED: the multi-process test needs a PostgreSQL server that several processes can share (PGlite lives inside one process). Set DATABASE_URL=postgres://postgres@127.0.0.1:5432/test to run it.',
  );
}

// ---------------------------------------------------------------------------------------------
// What the service does: 1,000 payments, each through a few states, each state one event.

type Plan = 'paid' | 'overpaid' | 'expired' | 'pending';
interface PlannedPayment {
  plan: Plan;
  states: Array<{ type: string; payment: Payment }>;
}

function planPayments(): PlannedPayment[] {
  const hour = 3_600_000;
  return Array.from({ length: PAYMENTS }, (_, i) => {
    const plan: Plan = i % 20 < 10 ? 'paid' : i % 20 < 14 ? 'overpaid' : i % 20 < 17 ? 'expired' : 'pending';
    const expiresAt = new Date(Date.now() + (plan === 'expired' ? -hour : hour)).toISOString();
    const base = samplePayment({ amount: '25.00', expiresAt, referenceId: `order-${i}` });
    const state = (status: string, amountReceived: string, remaining: string, surplus = '0') => ({ ...base, status, amountReceived, remaining, surplus });
    const created = { type: 'payment.created', payment: state('CREATED', '0', '25.00') };
    const partial = (received: string) => ({ type: 'payment.partially_paid', payment: state('PARTIALLY_PAID', received, (25 - Number(received)).toFixed(2)) });
    const states = {
      paid: [created, partial('10.00'), partial('20.00'), { type: 'payment.paid', payment: state('PAID', '25.00', '0') }],
      overpaid: [created, partial('10.00'), { type: 'payment.overpaid', payment: state('OVERPAID', '30.00', '0', '5.00') }],
      expired: [created, { type: 'payment.expired', payment: state('EXPIRED', '0', '25.00') }],
      pending: [created, partial('5.00'), partial('10.00'), partial('15.00')],
    }[plan];
    return { plan, states };
  });
}

interface Delivery {
  id: string;
  body: string;
}

/** Every event once, then 30% of the deliveries again, all in a random order. */
function deliveriesOf(payments: PlannedPayment[]): { events: Delivery[]; deliveries: Delivery[] } {
  const events = payments.flatMap(({ states }, p) =>
    states.map(({ type, payment }, s) => {
      const id = `evt_${p}_${s}`;
      return { id, body: JSON.stringify({ id, type, createdAt: payment.updatedAt, environment: 'test', data: payment }) };
    }),
  );
  const duplicates = Array.from({ length: DELIVERIES - events.length }, () => events[randomInt(events.length)]!);
  const deliveries = [...events, ...duplicates];
  for (let i = deliveries.length - 1; i > 0; i--) {
    const j = randomInt(i + 1);
    [deliveries[i], deliveries[j]] = [deliveries[j]!, deliveries[i]!];
  }
  return { events, deliveries };
}

// ---------------------------------------------------------------------------------------------
// The processes.

interface Member {
  child: ChildProcessWithoutNullStreams;
  first: Promise<Record<string, unknown>>;
  stderr: () => string;
}

function start(args: ClusterProcessArgs): Member {
  const child = spawn(process.execPath, ['--import', 'tsx', MEMBER, JSON.stringify(args)], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const first = lines.next().then((line) => {
    if (line.done) throw new Error(`${args.role} exited before it was ready: ${stderr}`);
    return JSON.parse(line.value) as Record<string, unknown>;
  });
  return { child, first, stderr: () => stderr };
}

/** POST `body` to a receiver; resolves with the status. (node:http with keep-alive: fetch costs this box several times the CPU.) */
function post(agent: Agent, port: number, headers: Record<string, string>, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      {
        host: '127.0.0.1',
        port,
        path: '/webhooks/checkout',
        method: 'POST',
        agent,
        timeout: 10_000,
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      },
      (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
        response.on('error', reject);
      },
    );
    request.on('timeout', () => request.destroy(new Error('delivery timed out')));
    request.on('error', reject);
    request.end(body);
  });
}

/** Deliver `deliveries` with `SENDERS` in flight, each to a random receiver, retrying elsewhere until one acknowledges. */
async function send(deliveries: Delivery[], ports: number[], onProgress: (acked: number) => void): Promise<{ retries: number }> {
  const agent = new Agent({ keepAlive: true, maxSockets: SENDERS });
  let next = 0;
  let acked = 0;
  let retries = 0;
  async function deliver({ id, body }: Delivery): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const port = ports[randomInt(ports.length)]!;
      const headers = { 'content-type': 'application/json', ...signWebhook({ id, body, secret: SECRET }) };
      const status = await post(agent, port, headers, body).catch((error: Error) => error);
      if (typeof status === 'number' && status >= 200 && status < 300) return;
      if (attempt > 20) throw new Error(`delivery ${id} failed 20 times, last: ${String(status)}`);
      retries += 1;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
  try {
    await Promise.all(
      Array.from({ length: SENDERS }, async () => {
        while (next < deliveries.length) {
          await deliver(deliveries[next++]!);
          onProgress(++acked);
        }
      }),
    );
  } finally {
    agent.destroy();
  }
  return { retries };
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

describe.skipIf(!DATABASE_URL)('PostgresStore shared by several processes', () => {
  const databases = new TestDatabases();
  const members: Member[] = [];
  let schema: string;
  let store: PostgresStore;

  beforeAll(async () => {
    store = await databases.store();
    schema = store.schema;
    await store.open();
    await databases.query(`CREATE TABLE "${schema}".handler_calls (
      seq bigint GENERATED ALWAYS AS IDENTITY, key text NOT NULL, outcome text NOT NULL, source text NOT NULL,
      owner text NOT NULL, attempt integer NOT NULL, pid integer NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp())`);
    await databases.query(`CREATE TABLE "${schema}".service_payments (id text PRIMARY KEY, payment jsonb NOT NULL)`);
  });

  afterAll(async () => {
    await store?.close();
    for (const { child } of members) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await databases.dispose();
  });

  it('three receivers and two reconcilers, 5,000 deliveries with 30% duplicates, one receiver SIGKILLed midway: every event stored once, each handler completed once, nothing left claimed', async () => {
    const payments = planPayments();
    const { events, deliveries } = deliveriesOf(payments);
    expect(deliveries).toHaveLength(DELIVERIES);
    expect((DELIVERIES - events.length) / DELIVERIES).toBeCloseTo(DUPLICATE_SHARE, 2);
    // The service knows every payment's final state (what reconcilers read when polling).
    await databases.query(`INSERT INTO "${schema}".service_payments (id, payment) SELECT * FROM unnest($1::text[], $2::jsonb[])`, [
      payments.map((p) => p.states.at(-1)!.payment.id),
      payments.map((p) => JSON.stringify(p.states.at(-1)!.payment)),
    ]);

    const common = { databaseUrl: DATABASE_URL!, schema, secret: SECRET, leaseMs: LEASE_MS };
    const receivers = [0, 1, 2].map(() => start({ role: 'receiver', ...common }));
    const reconcilers = [0, 1].map(() => start({ role: 'reconciler', ...common }));
    members.push(...receivers, ...reconcilers);
    const ports = (await Promise.all(receivers.map((member) => member.first))).map((ready) => ready.port as number);
    await Promise.all(reconcilers.map((member) => member.first));

    // Midway, once the victim holds a few leases (handlers take some ms, so it soon does), SIGKILL
    // it. The runs still leased to it after it died are what the others must take over.
    const victim = receivers[0]!;
    const killedPid = victim.child.pid!;
    const leasedToVictim = async () => (await store.listRuns({ status: 'running', limit: 100_000 })).filter((run) => run.owner?.includes(`:${killedPid}:`));
    const exited = new Promise<NodeJS.Signals | null>((resolve) => victim.child.once('exit', (_code, signal) => resolve(signal)));
    let kill: Promise<Run[]> | undefined;
    let killedAt = 0;
    const started = Date.now();
    const { retries } = await send(deliveries, ports, (acked) => {
      if (kill || acked < DELIVERIES * 0.4) return;
      killedAt = acked;
      kill = waitFor('the victim to hold leases', async () => ((await leasedToVictim()).length >= 3 ? true : undefined), 10_000).then(async () => {
        victim.child.kill('SIGKILL');
        expect(await exited).toBe('SIGKILL');
        return leasedToVictim();
      });
    });
    const sendSeconds = (Date.now() - started) / 1000;
    const abandoned = await kill!;
    expect(abandoned.length).toBeGreaterThan(0);

    // Every run finished: the killed receiver's claims are taken over once their lease runs out.
    const unfinished = () => store.listRuns({ status: ['pending', 'running', 'failed'], limit: 1_000_000 });
    await waitFor('every run to finish', async () => ((await unfinished()).length === 0 ? true : undefined), 45_000);

    // Every event stored exactly once, with its body byte for byte.
    const stored = await store.listEvents({ limit: 1_000_000 });
    expect(stored).toHaveLength(events.length);
    const bodies = new Map(stored.map((event) => [event.id, event.body]));
    for (const event of events) expect(bodies.get(event.id), event.id).toBe(event.body);

    // Nothing left claimed: every run is done, and none holds a lease.
    const runs = await store.listRuns({ limit: 1_000_000 });
    expect(runs.filter((run) => run.status !== 'done' || run.leaseUntil !== undefined)).toEqual([]);
    expect(runs.filter((run) => run.kind === 'event')).toHaveLength(events.length);

    // Each resource ended at its final outcome, whatever order its events came in.
    const outcomeOf = new Map((await store.listResources({ limit: 1_000_000 })).map((record) => [record.id, record.outcome]));
    for (const payment of payments) expect(outcomeOf.get(payment.states[0]!.payment.id)).toBe(payment.plan);

    // Each fulfilled payment's handler completed exactly once: one call made on the claim that
    // marked the run done. Any other call must be one the killed receiver made and could not
    // mark done (it died between the handler's return and completeRun).
    const calls = await databases.query<{ key: string; owner: string; attempt: number; pid: number }>(
      `SELECT key, owner, attempt, pid FROM "${schema}".handler_calls`,
    );
    const fulfillments = runs.filter((run) => run.kind === 'fulfillment');
    const runOf = new Map(fulfillments.map((run) => [run.key, run]));
    const expected = payments
      .filter((p) => p.plan !== 'pending')
      .map((p) => runKeys.fulfillment('payment', p.states[0]!.payment.id, p.plan as Exclude<Plan, 'pending'>));
    expect(new Set(calls.map((call) => call.key))).toEqual(new Set(expected));
    expect(fulfillments.map((run) => run.key).sort()).toEqual([...expected].sort());
    let interrupted = 0;
    for (const key of expected) {
      const run = runOf.get(key)!;
      const mine = calls.filter((call) => call.key === key);
      const completing = mine.filter((call) => call.owner === run.owner && call.attempt === run.attempts);
      expect(completing, key).toHaveLength(1);
      const others = mine.filter((call) => !completing.includes(call));
      for (const other of others) expect({ key, pid: other.pid, earlier: other.attempt < run.attempts }).toEqual({ key, pid: killedPid, earlier: true });
      interrupted += others.length;
    }

    // The runs the victim died holding were taken over by the others once their lease ran out.
    const runByKey = new Map(runs.map((run) => [run.key, run]));
    for (const run of abandoned) {
      const final = runByKey.get(run.key)!;
      expect({ key: run.key, status: final.status, takenOver: final.owner !== run.owner && final.attempts > run.attempts }).toEqual({
        key: run.key,
        status: 'done',
        takenOver: true,
      });
    }
    const sources = await databases.query<{ source: string; calls: number }>(
      `SELECT source, count(*)::int AS calls FROM "${schema}".handler_calls GROUP BY source ORDER BY source`,
    );
    console.log(
      `cluster: ${DELIVERIES} deliveries (${events.length} events) in ${sendSeconds.toFixed(1)} s, receiver ${killedPid} killed after ${killedAt} acks; ` +
        `${retries} deliveries resent; ${abandoned.length} runs it died holding taken over after their lease; ${expected.length} handlers completed once ` +
        `(${sources.map((row) => `${row.calls} via ${row.source}`).join(', ')}); ${interrupted} call(s) cut short by the kill`,
    );
    for (const member of [...receivers.slice(1), ...reconcilers]) expect(member.child.exitCode, member.stderr()).toBeNull();
  }, 240_000);
});

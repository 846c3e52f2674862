/**
 * Webhook receiver throughput: how many signed ~1.2 KB payment events per second each setup
 * acknowledges, every request a new event id with a fresh signature (autocannon `setupRequest`).
 *
 * The server under test runs in a child process (its own core), autocannon in this one, so the
 * load generator does not share the server's event loop. Servers listen on 127.0.0.1 only.
 *
 * Run alone: `node --import tsx test/bench/receiver.bench.ts`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { listenOnLoopback } from '../support/ports.js';
import { forkServer, load, nextBody, serveInChild, WEBHOOK_PATH, type BenchResult, type ChildServer, type ForkedServer } from './load.js';

export type { BenchResult } from './load.js';

const WARMUP_SECONDS = 1;
const DURATION_SECONDS = 5;
const SECRET = 'whsec_YmVuY2gtc2VjcmV0LWZvci1yZWNlaXZlcnMh';
const ROLE_ENV = 'CHECKOUT_KIT_RECEIVER_BENCH';

type Scenario = { kind: 'bare' } | { kind: 'verify' } | { kind: 'receiver'; prestored: number } | { kind: 'lowdb'; prestored: number };

interface ServerConfig {
  scenario: Scenario;
  dir: string;
}

// ---------------------------------------------------------------------------------------------
// Server side (child process).

async function startServer(config: ServerConfig): Promise<ChildServer> {
  const { default: Fastify } = await import('fastify');
  const app = Fastify({ logger: false });
  const { scenario } = config;
  let stored: () => Promise<number | undefined> = async () => undefined;
  let closeStore: () => Promise<void> = async () => {};

  if (scenario.kind === 'bare') {
    app.post(WEBHOOK_PATH, async () => ({ received: true }));
  } else if (scenario.kind === 'verify') {
    const { checkoutWebhooks, createVerifier, WEBHOOK_ERROR_STATUS } = await import('../../src/webhooks/index.js');
    const verify = createVerifier({ secrets: SECRET });
    await app.register(checkoutWebhooks, {
      receiver: {
        maxBodyBytes: 65_536,
        async handle({ headers, body }) {
          try {
            const { id } = verify({ headers, body });
            return { status: 200, body: { received: true, id: id ?? '', duplicate: false } };
          } catch (error) {
            return { status: WEBHOOK_ERROR_STATUS.invalid_signature, body: { error: { code: 'invalid_signature', message: String(error) } } };
          }
        },
      },
    });
  } else if (scenario.kind === 'receiver') {
    const { SqliteStore } = await import('../../src/store/index.js');
    const { silentLogger } = await import('../../src/log/index.js');
    const { checkoutWebhooks, createReceiver } = await import('../../src/webhooks/index.js');
    const store = new SqliteStore({ dir: config.dir });
    await store.open();
    // Pre-fill in parallel batches: the store group-commits concurrent writes.
    for (let done = 0; done < scenario.prestored;) {
      const batch = Math.min(2000, scenario.prestored - done);
      await Promise.all(
        Array.from({ length: batch }, () => {
          const { id, body } = nextBody();
          return store.insertEvent({
            id,
            type: 'payment.paid',
            environment: 'test',
            createdAt: '2025-03-01T12:00:00.000Z',
            receivedAt: new Date().toISOString(),
            resourceKind: 'payment',
            resourceId: id.replace('evt_', 'pay_'),
            body,
          });
        }),
      );
      done += batch;
    }
    // Store and acknowledge only: what the sender waits for. Dispatch is measured elsewhere.
    const receiver = createReceiver({ store, secrets: SECRET, logger: silentLogger, dispatch: false, retention: false });
    await app.register(checkoutWebhooks, { receiver, lifecycle: false });
    stored = async () => (await store.listRuns({ kind: 'event', status: 'pending', limit: Number.MAX_SAFE_INTEGER })).length;
    closeStore = () => store.close();
  } else {
    const { Low } = await import('lowdb');
    const { JSONFile } = await import('lowdb/node');
    const { createVerifier } = await import('../../src/webhooks/index.js');
    interface Row {
      id: string;
      type: string;
      receivedAt: string;
      body: string;
    }
    const db = new Low<{ events: Row[] }>(new JSONFile(join(config.dir, 'db.json')), { events: [] });
    await db.read();
    for (let i = 0; i < scenario.prestored; i++) {
      const { id, body } = nextBody();
      db.data.events.push({ id, type: 'payment.paid', receivedAt: new Date().toISOString(), body });
    }
    await db.write();
    const verify = createVerifier({ secrets: SECRET });
    // The naive receiver: its own JSON-free body, a linear duplicate scan, push, rewrite the file.
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'string' }, (_request, body, done) => done(null, body));
    app.post(WEBHOOK_PATH, async (request, reply) => {
      const body = request.body as string;
      try {
        verify({ headers: request.headers, body });
      } catch {
        return reply.code(401).send({ error: { code: 'invalid_signature', message: 'bad signature' } });
      }
      const event = JSON.parse(body) as { id: string; type: string };
      if (!db.data.events.some((row) => row.id === event.id)) {
        db.data.events.push({ id: event.id, type: event.type, receivedAt: new Date().toISOString(), body });
        await db.write();
      }
      return { received: true, id: event.id };
    });
    stored = async () => db.data.events.length;
  }

  const port = await listenOnLoopback(app);
  return {
    port,
    async close() {
      await app.close();
      const count = await stored();
      await closeStore();
      return count;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Load side (this process).

async function measure(name: string, scenario: Scenario): Promise<BenchResult & { setupMs: number }> {
  const dir = await mkdtemp(join(tmpdir(), 'checkout-kit-receiver-bench-'));
  let server: ForkedServer | undefined;
  try {
    server = await forkServer({ module: import.meta.url, roleEnv: ROLE_ENV, config: { scenario, dir } satisfies ServerConfig, name });
    await load({ port: server.port, seconds: WARMUP_SECONDS, secret: SECRET });
    const result = await load({ port: server.port, seconds: DURATION_SECONDS, secret: SECRET });
    const stored = await server.close();
    const ok = result['2xx'];
    const notes = [`p99 ${result.latency.p99} ms`];
    if (result.non2xx > 0 || result.errors > 0) notes.push(`${result.non2xx} non-2xx, ${result.errors} errors`);
    if (stored !== undefined) notes.push(`${stored} events stored at end`);
    return { name, eventsPerSec: Math.round(ok / result.duration), note: notes.join('; '), setupMs: server.setupMs };
  } finally {
    server?.kill();
    await rm(dir, { recursive: true, force: true });
  }
}

/** Rounds of the bare/verify pair: the ratio is the median of per-round ratios (the machine is noisy). */
const RATIO_ROUNDS = 3;

/** Every scenario in one run, each against a fresh server (and a fresh store folder). */
export async function run(): Promise<BenchResult[]> {
  const bareName = 'fastify bare route (200, no work)';
  const verifyName = 'verify only (Standard Webhooks, raw body)';
  // Bare and verify alternate, so a load spike on the shared machine hits both alike.
  const pairs: Array<{ bare: BenchResult; verify: BenchResult }> = [];
  for (let round = 0; round < RATIO_ROUNDS; round++) {
    const { setupMs: _b, ...bare } = await measure(bareName, { kind: 'bare' });
    const { setupMs: _v, ...verify } = await measure(verifyName, { kind: 'verify' });
    pairs.push({ bare, verify });
  }
  const median = <T>(items: T[], key: (item: T) => number) => [...items].sort((a, b) => key(a) - key(b))[Math.floor(items.length / 2)]!;
  const ratios = pairs.map((pair) => pair.verify.eventsPerSec / pair.bare.eventsPerSec);
  const middle = median(pairs, (pair) => pair.verify.eventsPerSec / pair.bare.eventsPerSec);
  const bare = { ...middle.bare, note: `${middle.bare.note}; round with the median ratio of ${RATIO_ROUNDS}` };
  const verify = {
    ...middle.verify,
    note: `${(middle.verify.eventsPerSec / middle.bare.eventsPerSec).toFixed(2)}x bare fastify (median of rounds: ${ratios.map((r) => r.toFixed(2)).join(', ')}); ${middle.verify.note}`,
  };

  const scenarios: Array<[string, Scenario]> = [
    ['receiver: verify + durable store + ack, 0 stored', { kind: 'receiver', prestored: 0 }],
    ['receiver: verify + durable store + ack, 10,000 stored', { kind: 'receiver', prestored: 10_000 }],
    ['receiver: verify + durable store + ack, 100,000 stored', { kind: 'receiver', prestored: 100_000 }],
    ['naive lowdb receiver (push + write per event), 0 stored', { kind: 'lowdb', prestored: 0 }],
    ['naive lowdb receiver (push + write per event), 10,000 stored', { kind: 'lowdb', prestored: 10_000 }],
  ];
  const results: BenchResult[] = [bare, verify];
  for (const [name, scenario] of scenarios) {
    const { setupMs, ...result } = await measure(name, scenario);
    if (setupMs > 2000) result.note = `${result.note}; pre-fill ${(setupMs / 1000).toFixed(1)} s`;
    results.push(result);
  }
  const atZero = results[2]!.eventsPerSec;
  const atHundredK = results[4]!;
  atHundredK.note = `${(atHundredK.eventsPerSec / atZero).toFixed(2)}x its figure at 0; ${atHundredK.note}`;
  return results;
}

if (process.env[ROLE_ENV]) {
  void serveInChild(ROLE_ENV, startServer);
} else if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const results = await run();
  console.table(results);
}

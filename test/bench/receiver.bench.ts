/**
 * Webhook receiver throughput: how many signed ~1.2 KB payment events per second each setup
 * acknowledges, every request a new event id with a fresh signature (autocannon `setupRequest`).
 *
 * The server under test runs in a child process (its own core), autocannon in this one, so the
 * load generator does not share the server's event loop. Servers listen on 127.0.0.1 only.
 *
 * Run alone: `node --import tsx test/bench/receiver.bench.ts`.
 */
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { signWebhook } from '../../src/webhooks/index.js';

export interface BenchResult {
  name: string;
  eventsPerSec: number;
  note?: string;
}

const CONNECTIONS = 50;
const WARMUP_SECONDS = 1;
const DURATION_SECONDS = 5;
const PATH = '/webhooks/checkout';
const SECRET = 'whsec_YmVuY2gtc2VjcmV0LWZvci1yZWNlaXZlcnMh';
const ROLE_ENV = 'CHECKOUT_KIT_RECEIVER_BENCH';

type Scenario = { kind: 'bare' } | { kind: 'verify' } | { kind: 'receiver'; prestored: number } | { kind: 'lowdb'; prestored: number };

interface ServerConfig {
  scenario: Scenario;
  dir: string;
}

type ChildMessage =
  | { type: 'ready'; port: number; setupMs: number }
  | { type: 'closed'; stored: number | undefined }
  | { type: 'error'; message: string };

// ---------------------------------------------------------------------------------------------
// Payloads: one realistic payment event; a unique suffix is spliced into its ids per request.

const ID_MARK = '@@ID@@';
const TEMPLATE = JSON.stringify({
  id: `evt_${ID_MARK}`,
  type: 'payment.paid',
  createdAt: '2025-03-01T12:00:00.000Z',
  environment: 'test',
  data: {
    id: `pay_${ID_MARK}`,
    status: 'PAID',
    environment: 'test',
    addressMode: 'EVM',
    amount: '149.90',
    amountReceived: '149.90',
    remaining: '0',
    surplus: '0',
    token: 'USDC',
    referenceId: 'order-2025-000123',
    email: 'buyer@example.com',
    checkoutUrl: 'https://pay.example.com/checkout/3f1c2a7e-9b4d-4c1e-8a55-1d2e3f4a5b6c',
    expiresAt: '2025-03-01T13:00:00.000Z',
    successUrl: 'https://shop.example.com/checkout/return?orderId=order-2025-000123',
    cancelUrl: 'https://shop.example.com/cart',
    depositAddresses: [
      { networkId: 1, chainName: 'Ethereum', family: 'evm', address: '0x71C7656EC7ab88b098defB751B7401B5f6d8976F', token: 'USDC', chainId: '0d6a3c10-1f2e-4a5b-9c8d-7e6f5a4b3c2d' },
      { networkId: 137, chainName: 'Polygon', family: 'evm', address: '0x8Ba1f109551bD432803012645Ac136ddd64DBA72', token: 'USDC', chainId: '2b7e4d90-3c1a-4f6e-8d5b-9a0c1e2f3a4b' },
      { networkId: 728126428, chainName: 'Tron', family: 'tron', address: 'TXLAQ63Xg1NAzckPwKHvzw7CSEmLMEqcdj', token: 'USDT', chainId: '5e9f1a2b-6c3d-4e7f-8a9b-0c1d2e3f4a5b' },
    ],
    createdAt: '2025-03-01T12:00:00.000Z',
    updatedAt: '2025-03-01T12:07:31.000Z',
  },
}).split(ID_MARK);

const RUN_TAG = randomBytes(4).toString('hex');
let sequence = 0;

/** A new event body: both ids get the same unique suffix. */
function nextBody(): { id: string; body: string } {
  const suffix = `${RUN_TAG}${(sequence++).toString(36).padStart(8, '0')}`;
  return { id: `evt_${suffix}`, body: TEMPLATE.join(suffix) };
}

// ---------------------------------------------------------------------------------------------
// Server side (child process).

async function startServer(config: ServerConfig): Promise<{ port: number; close(): Promise<number | undefined> }> {
  const { default: Fastify } = await import('fastify');
  const app = Fastify({ logger: false });
  const { scenario } = config;
  let stored: () => Promise<number | undefined> = async () => undefined;
  let closeStore: () => Promise<void> = async () => {};

  if (scenario.kind === 'bare') {
    app.post(PATH, async () => ({ received: true }));
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
    const { EmbeddedStore } = await import('../../src/store/embedded/index.js');
    const { silentLogger } = await import('../../src/log/index.js');
    const { checkoutWebhooks, createReceiver } = await import('../../src/webhooks/index.js');
    const store = new EmbeddedStore({ dir: config.dir, logger: silentLogger });
    await store.open();
    // Pre-fill in parallel batches: the store group-commits concurrent writes.
    for (let done = 0; done < scenario.prestored; ) {
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
    app.post(PATH, async (request, reply) => {
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

  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
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

async function serverMain(): Promise<void> {
  const config = JSON.parse(process.env[ROLE_ENV]!) as ServerConfig;
  const send = (message: ChildMessage) => process.send?.(message);
  try {
    const started = Date.now();
    const server = await startServer(config);
    send({ type: 'ready', port: server.port, setupMs: Date.now() - started });
    process.on('message', (message) => {
      if (message !== 'close') return;
      void server.close().then(
        (stored) => {
          send({ type: 'closed', stored });
          process.disconnect?.();
        },
        (error: unknown) => send({ type: 'error', message: String(error) }),
      );
    });
  } catch (error) {
    send({ type: 'error', message: error instanceof Error ? (error.stack ?? error.message) : String(error) });
    process.exitCode = 1;
    process.disconnect?.();
  }
}

// ---------------------------------------------------------------------------------------------
// Load side (this process).

function load(port: number, seconds: number): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url: `http://127.0.0.1:${port}${PATH}`,
        connections: CONNECTIONS,
        duration: seconds,
        requests: [
          {
            method: 'POST',
            // Called for every request: a new event id, signed now.
            setupRequest: (request) => {
              const { id, body } = nextBody();
              const headers = signWebhook({ id: `msg_${id.slice(4)}`, body, secret: SECRET });
              return { ...request, body, headers: { 'content-type': 'application/json', ...headers } };
            },
          },
        ],
      },
      (error, result) => (error ? reject(error) : resolve(result)),
    );
  });
}

async function measure(name: string, scenario: Scenario): Promise<BenchResult & { setupMs: number }> {
  const dir = await mkdtemp(join(tmpdir(), 'checkout-kit-receiver-bench-'));
  const child = fork(fileURLToPath(import.meta.url), [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, [ROLE_ENV]: JSON.stringify({ scenario, dir } satisfies ServerConfig) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const next = () =>
    new Promise<ChildMessage>((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`bench server for "${name}" exited (${code}) early`));
      child.once('exit', onExit);
      child.once('message', (message) => {
        child.off('exit', onExit);
        resolve(message as ChildMessage);
      });
    });
  try {
    const ready = await next();
    if (ready.type !== 'ready') throw new Error(`bench server for "${name}" failed: ${ready.type === 'error' ? ready.message : ready.type}`);
    await load(ready.port, WARMUP_SECONDS);
    const result = await load(ready.port, DURATION_SECONDS);
    const exited = new Promise((resolve) => child.once('exit', resolve));
    const closing = next();
    child.send('close');
    const closed = await closing;
    await exited;
    const ok = result['2xx'];
    const notes = [`p99 ${result.latency.p99} ms`];
    if (result.non2xx > 0 || result.errors > 0) notes.push(`${result.non2xx} non-2xx, ${result.errors} errors`);
    if (closed.type === 'closed' && closed.stored !== undefined) notes.push(`${closed.stored} events stored at end`);
    return { name, eventsPerSec: Math.round(ok / result.duration), note: notes.join('; '), setupMs: ready.setupMs };
  } finally {
    if (child.exitCode === null) child.kill();
    await rm(dir, { recursive: true, force: true });
  }
}

/** Every scenario in one run, each against a fresh server (and a fresh store folder). */
export async function run(): Promise<BenchResult[]> {
  const scenarios: Array<[string, Scenario]> = [
    ['fastify bare route (200, no work)', { kind: 'bare' }],
    ['verify only (Standard Webhooks, raw body)', { kind: 'verify' }],
    ['receiver: verify + durable store + ack, 0 stored', { kind: 'receiver', prestored: 0 }],
    ['receiver: verify + durable store + ack, 10,000 stored', { kind: 'receiver', prestored: 10_000 }],
    ['receiver: verify + durable store + ack, 100,000 stored', { kind: 'receiver', prestored: 100_000 }],
    ['naive lowdb receiver (push + write per event), 0 stored', { kind: 'lowdb', prestored: 0 }],
    ['naive lowdb receiver (push + write per event), 10,000 stored', { kind: 'lowdb', prestored: 10_000 }],
  ];
  const results: BenchResult[] = [];
  for (const [name, scenario] of scenarios) {
    const { setupMs, ...result } = await measure(name, scenario);
    if (setupMs > 2000) result.note = `${result.note}; pre-fill ${(setupMs / 1000).toFixed(1)} s`;
    results.push(result);
  }
  const bare = results[0]!.eventsPerSec;
  const verify = results[1]!;
  verify.note = `${(verify.eventsPerSec / bare).toFixed(2)}x bare fastify; ${verify.note}`;
  return results;
}

if (process.env[ROLE_ENV]) {
  void serverMain();
} else if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const results = await run();
  console.table(results);
}

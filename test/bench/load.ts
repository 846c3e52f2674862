/**
 * What the receiver benchmarks share: the signed ~1.2 KB payment events they send, the autocannon
 * load that sends them, and the plumbing that runs the server under test in a child process (its
 * own core), so the load generator does not share the server's event loop.
 */
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { signWebhook } from '../../src/webhooks/index.js';
import { DEPOSIT_ADDRESSES } from './serve-payloads.js';

export interface BenchResult {
  name: string;
  eventsPerSec: number;
  note?: string;
}

/** Where every bench server takes webhooks. */
export const WEBHOOK_PATH = '/webhooks/checkout';
const CONNECTIONS = 50;

// ---------------------------------------------------------------------------------------------
// Payloads: one realistic payment event; a unique suffix is spliced into its ids per request.

/** Stands for the unique part of both ids in `EVENT_TEMPLATE` (`evt_…`, and the payment UUID's last group). */
export const ID_MARK = '@@ID@@';
export const EVENT_TEMPLATE = JSON.stringify({
  id: `evt_${ID_MARK}`,
  type: 'payment.paid',
  createdAt: '2025-03-01T12:00:00.000Z',
  environment: 'test',
  data: {
    // A UUID, as the spec's Payment id is (the receiver refuses anything else as invalid_event).
    id: `00000000-0000-4000-8000-${ID_MARK}`,
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
    depositAddresses: DEPOSIT_ADDRESSES,
    createdAt: '2025-03-01T12:00:00.000Z',
    updatedAt: '2025-03-01T12:07:31.000Z',
  },
});
const TEMPLATE_PARTS = EVENT_TEMPLATE.split(ID_MARK);

const RUN_TAG = randomBytes(2).toString('hex');
let sequence = 0;

/** A new event body: both ids get the same unique suffix. */
export function nextBody(): { id: string; body: string } {
  // 12 hex digits: the last group of the payment's UUID.
  const suffix = `${RUN_TAG}${(sequence++).toString(16).padStart(8, '0')}`;
  return { id: `evt_${suffix}`, body: TEMPLATE_PARTS.join(suffix) };
}

// ---------------------------------------------------------------------------------------------
// Load side (the bench's own process).

/** `seconds` of load on a bench server: every request a new event, signed now with `secret`. */
export function load({ port, seconds, secret }: { port: number; seconds: number; secret: string }): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url: `http://127.0.0.1:${port}${WEBHOOK_PATH}`,
        connections: CONNECTIONS,
        duration: seconds,
        requests: [
          {
            method: 'POST',
            // Called for every request: a new event id, signed now.
            setupRequest: (request) => {
              const { id, body } = nextBody();
              const headers = signWebhook({ id: `msg_${id.slice(4)}`, body, secret });
              return { ...request, body, headers: { 'content-type': 'application/json', ...headers } };
            },
          },
        ],
      },
      (error, result) => (error ? reject(error) : resolve(result)),
    );
  });
}

// ---------------------------------------------------------------------------------------------
// The server under test in a child process: `forkServer` in the bench, `serveInChild` in the child.

type ChildMessage = { type: 'ready'; port: number; setupMs: number } | { type: 'closed'; stored: number | undefined } | { type: 'error'; message: string };

/** A bench server as the child process runs it; `close` returns how many events it holds. */
export interface ChildServer {
  port: number;
  close(): Promise<number | undefined>;
}

/**
 * The child's side: start the server from the configuration the parent put in `roleEnv`, report
 * its port (and how long setup took), and close it when the parent says so.
 */
export async function serveInChild<Config>(roleEnv: string, start: (config: Config) => Promise<ChildServer>): Promise<void> {
  const config = JSON.parse(process.env[roleEnv]!) as Config;
  const send = (message: ChildMessage) => process.send?.(message);
  try {
    const started = Date.now();
    const server = await start(config);
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

export interface ForkedServer {
  port: number;
  /** The child's process id (for its CPU time and memory). */
  pid: number;
  /** How long the child took to start its server (pre-filling included). */
  setupMs: number;
  /** Close the server, wait for the child to exit; the events stored, when it said. */
  close(): Promise<number | undefined>;
  /** Kill the child if it is still running (for `finally`). */
  kill(): void;
}

/**
 * Fork `module` (the bench file itself, `import.meta.url`) with `config` in `roleEnv`, where it
 * runs `serveInChild`, and wait until its server is ready. `name` is for error messages.
 * BENCH_CHILD_CPU_PROF=dir writes a V8 CPU profile of each helper there (e.g. the dispatch-off
 * receiver, to set beside serve's BENCH_SERVE_CPU_PROF profile).
 */
export async function forkServer<Config>({
  module,
  roleEnv,
  config,
  name,
}: {
  module: string;
  roleEnv: string;
  config: Config;
  name: string;
}): Promise<ForkedServer> {
  const child = fork(fileURLToPath(module), [], {
    execArgv: ['--import', 'tsx', ...(process.env.BENCH_CHILD_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CHILD_CPU_PROF}`] : [])],
    env: { ...process.env, [roleEnv]: JSON.stringify(config) },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const kill = () => {
    if (child.exitCode === null) child.kill();
  };
  const next = () =>
    new Promise<ChildMessage>((resolve, reject) => {
      const onExit = (code: number | null) => reject(new Error(`bench server "${name}" exited (${code}) early`));
      child.once('exit', onExit);
      child.once('message', (message) => {
        child.off('exit', onExit);
        resolve(message as ChildMessage);
      });
    });
  // Rejects only once the child has exited.
  const ready = await next();
  if (ready.type !== 'ready') {
    kill();
    throw new Error(`bench server "${name}" failed: ${ready.type === 'error' ? ready.message : ready.type}`);
  }
  return {
    port: ready.port,
    pid: child.pid!,
    setupMs: ready.setupMs,
    async close() {
      const closing = next();
      child.send('close');
      try {
        const closed = await closing;
        if (closed.type !== 'closed') return undefined;
        await exited;
        return closed.stored;
      } finally {
        kill();
      }
    },
    kill,
  };
}

/**
 * "Two writers and more" on one embedded store: a receiver under load from
 * the test's own signed deliveries, two reconcile loops and a replay of every stored event back to
 * the receiver, all writing the same SQLite store for a fixed time: the real processes
 * (`checkout-kit serve`, two loops of `checkout-kit reconcile`, a loop of `checkout-kit replay
 * --all`) with CHECKOUT_STORE=file:<dir>, counted from what the store, the load and the handlers
 * recorded.
 */
import { randomUUID } from 'node:crypto';
import { Agent, request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { CheckoutClient } from '../../../src/client/index.js';
import { SqliteStore, type Run } from '../../../src/store/index.js';
import { signWebhook } from '../../../src/webhooks/index.js';
import type { HandlerLine } from './storm-fulfillment.js';
import { readHandlerLog } from './storm-figures.js';
import { sleep, waitForOutput, type Procs } from './procs-children.js';
import { storeErrorLines } from './store-errors.js';
import { postJson, type RunningSandbox } from './storm-sandbox.js';
import { STORM_HANDLERS } from './storm-run.js';

type Plan = 'paid' | 'overpaid' | 'pending' | 'expired' | 'underpaid';
const PLANS: Plan[] = ['paid', 'paid', 'overpaid', 'pending', 'expired', 'underpaid'];

export interface WriterPayment {
  id: string;
  plan: Plan;
  /** The payment as the sandbox last answered it (its final state once activated). */
  snapshot: Record<string, unknown>;
}

const TYPE_OF: Record<string, string> = {
  CREATED: 'payment.created',
  PARTIALLY_PAID: 'payment.partially_paid',
  PAID: 'payment.paid',
  OVERPAID: 'payment.overpaid',
  EXPIRED: 'payment.expired',
};

/** Create `count` payments in the sandbox (no webhooks: the test sends its own). */
export async function createPayments(sandbox: RunningSandbox, count: number, random: () => number): Promise<WriterPayment[]> {
  const merchant = sandbox.credentials.test.merchant;
  const client = new CheckoutClient({ baseUrl: sandbox.url, apiKey: merchant.apiKey, signingSecret: merchant.signingSecret, maxRps: 1000 });
  const payments: WriterPayment[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < count) {
        next += 1;
        const plan = PLANS[Math.floor(random() * PLANS.length)]!;
        const created = await client.payments.create({ amount: '20.00', email: 'buyer@example.com' });
        payments.push({ id: created.id, plan, snapshot: created as unknown as Record<string, unknown> });
      }
    }),
  );
  return payments;
}

/** Pay, part-pay, overpay or expire the payment at the sandbox, as its plan says. */
async function activate(sandboxUrl: string, payment: WriterPayment): Promise<void> {
  const steps: Array<[string, unknown]> = {
    paid: [['deposit', { amount: '20.00' }]],
    overpaid: [['deposit', { amount: '21.50' }]],
    pending: [['deposit', { amount: '5.00' }]],
    expired: [['expire', {}]],
    underpaid: [
      ['deposit', { amount: '5.00' }],
      ['expire', {}],
    ],
  }[payment.plan] as Array<[string, unknown]>;
  for (const [action, body] of steps) {
    const answer = await postJson(`${sandboxUrl}/sandbox/payments/${payment.id}/${action}`, body);
    if (answer.status !== 200) throw new Error(`sandbox ${action} ${payment.id}: ${answer.status} ${JSON.stringify(answer.body)}`);
    payment.snapshot = answer.body as Record<string, unknown>;
  }
}

/** The handler key(s) a payment's final state calls for (paid and overpaid are alternatives). */
export function expectedOutcomes(payment: WriterPayment): string[][] {
  switch (payment.plan) {
    case 'paid':
      return [['paid']];
    case 'overpaid':
      return [['overpaid', 'paid']];
    case 'expired':
      return [['expired']];
    case 'underpaid':
      return [['underpaid']];
    case 'pending':
      return [];
  }
}

export interface LoadStats {
  seconds: number;
  sent: number;
  resent: number;
  acked: Set<string>;
  statuses: Record<string, number>;
  activated: WriterPayment[];
}

function post(agent: Agent, url: URL, headers: Record<string, string>, body: string): Promise<number> {
  return new Promise((resolve) => {
    const request = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        agent,
        timeout: 30_000,
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      },
      (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
        response.on('error', () => resolve(0));
      },
    );
    request.on('timeout', () => request.destroy(new Error('timeout')));
    request.on('error', () => resolve(0));
    request.end(body);
  });
}

/**
 * For `seconds`: pay the payments one after another (spread over the time), and send signed
 * deliveries about the paid ones from `connections` keep-alive connections as fast as they are
 * answered — new event ids (about 70%) and redeliveries of earlier ones, byte for byte (30%).
 */
export async function runLoad(options: {
  receiverUrl: string;
  sandboxUrl: string;
  secret: string;
  payments: WriterPayment[];
  seconds: number;
  connections: number;
  random: () => number;
}): Promise<LoadStats> {
  const { random } = options;
  const url = new URL(options.receiverUrl);
  const agent = new Agent({ keepAlive: true, maxSockets: options.connections + 1 });
  const started = Date.now();
  const deadline = started + options.seconds * 1000;
  const stats: LoadStats = { seconds: 0, sent: 0, resent: 0, acked: new Set(), statuses: {}, activated: [] };
  const sentBefore: Array<{ id: string; body: string }> = [];

  const deliver = async (id: string, body: string) => {
    const status = await post(agent, url, { 'content-type': 'application/json', ...signWebhook({ id, body, secret: options.secret }) }, body);
    stats.statuses[status] = (stats.statuses[status] ?? 0) + 1;
    if (status >= 200 && status < 300) stats.acked.add(id);
    return status;
  };
  const newEvent = (payment: WriterPayment) => {
    const id = `evt_${randomUUID().replaceAll('-', '')}`;
    const type = TYPE_OF[String(payment.snapshot.status)] ?? 'payment.created';
    const body = JSON.stringify({ id, type, createdAt: new Date().toISOString(), environment: 'test', data: payment.snapshot });
    sentBefore.push({ id, body });
    return { id, body };
  };

  const activator = (async () => {
    const every = (options.seconds * 1000 * 0.8) / options.payments.length;
    for (const [i, payment] of options.payments.entries()) {
      const at = started + i * every;
      if (at > Date.now()) await sleep(at - Date.now());
      if (Date.now() > deadline) break;
      await activate(options.sandboxUrl, payment);
      stats.activated.push(payment);
      // Every paid payment gets at least one delivery, acknowledged (so the store knows it).
      const { id, body } = newEvent(payment);
      for (let attempt = 0; attempt < 50 && !stats.acked.has(id); attempt++) {
        stats.sent += 1;
        if ((await deliver(id, body)) >= 300) await sleep(100);
      }
    }
  })();

  const senders = Array.from({ length: options.connections }, async () => {
    while (Date.now() < deadline) {
      if (stats.activated.length === 0) {
        await sleep(20);
        continue;
      }
      let delivery;
      if (sentBefore.length > 0 && random() < 0.3) {
        delivery = sentBefore[Math.floor(random() * sentBefore.length)]!;
        stats.resent += 1;
      } else {
        delivery = newEvent(stats.activated[Math.floor(random() * stats.activated.length)]!);
      }
      stats.sent += 1;
      await deliver(delivery.id, delivery.body);
    }
  });
  await Promise.all([activator, ...senders]);
  agent.destroy();
  stats.seconds = (Date.now() - started) / 1000;
  return stats;
}

/** One side of the scenario: the receiver's URL, and a way to stop everything but the receiver, then the receiver. */
export interface Topology {
  receiverUrl: string;
  /** Stop the reconcile and replay loops (the receiver keeps dispatching). */
  stopLoops(): Promise<LoopStats>;
  /** Stop the receiver. */
  stop(): Promise<void>;
  /** Stop whatever still runs (afterEach, when a test failed midway); safe to call twice. */
  dispose(): Promise<void>;
  handlerLines(): HandlerLine[];
  /** Lines any of the processes printed about the store failing (SQLITE_BUSY, a locked or damaged file). */
  storeErrors(): string[];
}

export interface LoopStats {
  reconcilePasses: number;
  reconcileSkipped: number;
  reconcileFailed: number;
  replays: number;
  replayed: number;
}

const parse = (text: string): Record<string, unknown> | undefined => {
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return undefined;
  }
};

/** The real processes on `file:<storeDir>`. */
export async function cliTopology(options: {
  procs: Procs;
  sandbox: RunningSandbox;
  storeDir: string;
  cwd: string;
  port: number;
  seed: number;
}): Promise<Topology> {
  const { procs, sandbox } = options;
  const log = join(options.cwd, 'handlers.jsonl');
  const merchant = sandbox.credentials.test.merchant;
  const env: NodeJS.ProcessEnv = {
    CHECKOUT_BASE_URL: sandbox.url,
    CHECKOUT_API_KEY: merchant.apiKey,
    CHECKOUT_SIGNING_SECRET: merchant.signingSecret,
    CHECKOUT_INVOICE_KEY: merchant.invoiceKey,
    CHECKOUT_WEBHOOK_SECRET: sandbox.credentials.webhookSecret,
    CHECKOUT_STORE: `file:${options.storeDir}`,
    CHECKOUT_HANDLERS: STORM_HANDLERS,
    CHECKOUT_MAX_RPS: '1000',
    STORM_HANDLER_LOG: log,
    STORM_HANDLER_SEED: String(options.seed),
    STORM_HANDLER_PROFILE: 'quick',
    LOG_LEVEL: 'warn',
  };
  const serve = procs.cli('serve', ['serve', '--port', String(options.port)], { cwd: options.cwd, env });
  await waitForOutput(serve, /checkout-kit serve listening on/, 120_000);
  const receiverUrl = `http://127.0.0.1:${options.port}/webhooks/checkout`;

  let stopping = false;
  const stats: LoopStats = { reconcilePasses: 0, reconcileSkipped: 0, reconcileFailed: 0, replays: 0, replayed: 0 };
  const loopErrors: string[] = [];
  const reconcileLoop = async () => {
    while (!stopping) {
      const result = await procs.run('reconcile', ['reconcile', '--json', '--older-than', '0'], { cwd: options.cwd, env, timeoutMs: 180_000 });
      loopErrors.push(...storeErrorLines(result.stderr));
      const summary = parse(result.stdout);
      if (summary?.skipped) stats.reconcileSkipped += 1;
      else stats.reconcilePasses += 1;
      if (result.code !== 0) stats.reconcileFailed += 1;
      await sleep(300);
    }
  };
  let replay: ReturnType<Procs['cli']> | undefined;
  const replayLoop = async () => {
    while (!stopping) {
      replay = procs.cli('replay', ['replay', '--to', receiverUrl, '--all', '--json'], { cwd: options.cwd, env, wholeStdout: true });
      await replay.exited;
      loopErrors.push(...storeErrorLines(replay.stderr()));
      stats.replays += 1;
      stats.replayed += Number(parse(replay.stdout())?.delivered ?? 0);
      await sleep(1_000);
    }
  };
  const loops = Promise.all([reconcileLoop(), reconcileLoop(), replayLoop()]);
  return {
    receiverUrl,
    async stopLoops() {
      stopping = true;
      // A replay only sends (it read the store when it started): stop it where it is.
      if (replay) await procs.stop(replay, 5_000);
      await loops;
      return stats;
    },
    async stop() {
      await procs.stop(serve);
    },
    async dispose() {
      stopping = true;
      if (replay) await procs.kill(replay);
      await procs.kill(serve);
    },
    handlerLines: () => readHandlerLog(log),
    storeErrors: () => [...storeErrorLines(serve.stderr()), ...loopErrors],
  };
}

/** Open the store read-only from this process; the error when it cannot be read. */
export async function readStore(dir: string): Promise<{ ids: Set<string>; runs: Run[] } | { error: string }> {
  let store: SqliteStore | undefined;
  try {
    store = new SqliteStore({ dir, readonly: true });
    await store.open();
    const events = await store.listEvents({ limit: 100_000_000 });
    const runs = await store.listRuns({ limit: 100_000_000 });
    return { ids: new Set(events.map((event) => event.id)), runs };
  } catch (error) {
    return { error: (error as Error).message };
  } finally {
    await store?.close().catch(() => undefined);
  }
}

/** Wait (bounded) until every event and fulfillment run in the folder is done. */
export async function waitForDrain(dir: string, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const read = await readStore(dir);
    if ('error' in read) return false;
    if (read.runs.every((run) => run.status === 'done')) return true;
    if (Date.now() > deadline) return false;
    await sleep(1_000);
  }
}

/**
 * The figures of one run of the scenario. `lostAcked`: acknowledged events that the store, opened
 * afresh by the test, does not return (all of them when it cannot be opened); `lostAckedToCli`: those
 * missing from `checkout-kit events list`, run as its own process once everything has stopped.
 * Run figures are 'n/a' when the store cannot be read.
 */
export function writersFigures(input: {
  load: LoadStats;
  loops: LoopStats;
  lines: HandlerLine[];
  read: Awaited<ReturnType<typeof readStore>>;
  listedByCli: Set<string>;
  storeErrors: string[];
}) {
  const { load, lines, read } = input;
  const unreadable = 'error' in read;
  const readable = unreadable ? new Set<string>() : read.ids;
  const runs = unreadable ? [] : read.runs;
  const starts = new Map<string, number>();
  const ends = new Map<string, number>();
  for (const line of lines) {
    if (line.step === 'throw') continue;
    const counts = line.step === 'start' ? starts : ends;
    counts.set(line.key, (counts.get(line.key) ?? 0) + 1);
  }
  let missingHandlers = 0;
  const expected = new Set<string>();
  for (const payment of load.activated) {
    for (const alternatives of expectedOutcomes(payment)) {
      const keys = alternatives.map((outcome) => `payment:${payment.id}:${outcome}`);
      keys.forEach((key) => expected.add(key));
      if (!keys.some((key) => ends.has(key))) missingHandlers += 1;
    }
  }
  const lost = [...load.acked].filter((id) => !readable.has(id));
  const runFigure = (value: number) => (unreadable ? 'n/a' : value);
  return {
    figures: {
      seconds: Math.round(load.seconds),
      sent: load.sent,
      resent: load.resent,
      acked: load.acked.size,
      non2xx: Object.entries(load.statuses)
        .filter(([status]) => !status.startsWith('2'))
        .reduce((sum, [, count]) => sum + count, 0),
      paymentsPaidDuringRun: load.activated.length,
      reconcilePasses: input.loops.reconcilePasses,
      reconcileSkippedByLock: input.loops.reconcileSkipped,
      replays: input.loops.replays,
      replayed: input.loops.replayed,
      storeUnreadable: unreadable ? 1 : 0,
      lostAcked: lost.length,
      lostAckedToCli: [...load.acked].filter((id) => !input.listedByCli.has(id)).length,
      storeErrors: input.storeErrors.length,
      answered503: load.statuses['503'] ?? 0,
      eventRunsNotDone: runFigure(runs.filter((run) => run.kind === 'event' && run.status !== 'done').length),
      fulfilmentRunsNotDone: runFigure(runs.filter((run) => run.kind === 'fulfillment' && run.status !== 'done').length),
      missingHandlers,
      unexpectedHandlers: [...ends.keys()].filter((key) => !expected.has(key)).length,
      claimedTwice: [...starts.values()].filter((count) => count > 1).length,
      completedTwice: [...ends.values()].filter((count) => count > 1).length,
    },
    examples: {
      lost: lost.slice(0, 5),
      claimedTwice: [...starts].filter(([, count]) => count > 1).slice(0, 5),
      storeError: unreadable ? read.error.slice(0, 300) : undefined,
      storeErrors: input.storeErrors.slice(0, 5),
    },
  };
}

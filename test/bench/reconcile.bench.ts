/**
 * Reconcile cost: one pass over N open payments against a local HTTP stub of Get payment, on the
 * embedded store. Cost must grow with the open resources only, not with history, so the same pass
 * is also run with 50,000 closed (settled) payments in the store.
 *
 * Run alone: `node --import tsx test/bench/reconcile.bench.ts`.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CheckoutClient } from '../../src/client/index.js';
import { FulfillmentEngine } from '../../src/fulfillment/index.js';
import { reconcile } from '../../src/reconcile/index.js';
import { SqliteStore } from '../../src/store/index.js';
import type { Store } from '../../src/store/index.js';

export interface BenchResult {
  name: string;
  eventsPerSec: number;
  note?: string;
}

const KEYS = { apiKey: 'svc_mk_test_benchbenchbench', signingSecret: 'svc_ms_benchbenchbench' };

/** Get payment stub: every payment is open (nothing received, not expired). */
function startStub(): Promise<{ server: Server; url: string }> {
  const server = createServer((request, response) => {
    const id = request.url?.split('/').pop() ?? '';
    const now = new Date().toISOString();
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(
      JSON.stringify({
        id,
        status: 'CREATED',
        amount: '25.00',
        amountReceived: '0',
        expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
        createdAt: now,
        updatedAt: now,
      }),
    );
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as { port: number }).port}` })),
  );
}

async function seed(store: Store, open: number, closed: number): Promise<void> {
  const old = new Date(Date.now() - 3_600_000);
  const jobs: Array<() => Promise<unknown>> = [];
  for (let i = 0; i < open; i += 1) jobs.push(() => store.updateResource({ kind: 'payment', id: randomUUID(), source: 'checkout' }, old));
  for (let i = 0; i < closed; i += 1)
    jobs.push(() => store.updateResource({ kind: 'payment', id: randomUUID(), outcome: 'paid', source: 'webhook', open: false }, old));
  for (let i = 0; i < jobs.length; i += 500) await Promise.all(jobs.slice(i, i + 500).map((job) => job()));
}

async function pass(baseUrl: string, open: number, closed: number): Promise<{ perSecond: number; ms: number }> {
  const dir = await mkdtemp(join(tmpdir(), 'ck-bench-reconcile-'));
  const store = new SqliteStore({ dir });
  await store.open();
  try {
    await seed(store, open, closed);
    const engine = new FulfillmentEngine({ store, handlers: {}, client: new CheckoutClient({ baseUrl, ...KEYS }) });
    const started = performance.now();
    const summary = await reconcile({ store, engine, concurrency: 8 });
    const ms = performance.now() - started;
    if (summary.checked !== open) throw new Error(`expected ${open} checked, got ${summary.checked}`);
    return { perSecond: (open / ms) * 1000, ms };
  } finally {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
}

export async function run(): Promise<BenchResult[]> {
  const { server, url } = await startStub();
  try {
    await pass(url, 200, 0); // warm-up
    const small = await pass(url, 1_000, 0);
    const large = await pass(url, 10_000, 0);
    const history = await pass(url, 1_000, 50_000);
    return [
      { name: 'reconcile pass, 1,000 open payments', eventsPerSec: small.perSecond, note: `${Math.round(small.ms)} ms per pass` },
      {
        name: 'reconcile pass, 10,000 open payments',
        eventsPerSec: large.perSecond,
        note: `${Math.round(large.ms)} ms per pass; per-payment cost ${(small.perSecond / large.perSecond).toFixed(2)}x of 1,000`,
      },
      {
        name: 'reconcile pass, 1,000 open + 50,000 settled',
        eventsPerSec: history.perSecond,
        note: `${Math.round(history.ms)} ms per pass; per-payment cost ${(small.perSecond / history.perSecond).toFixed(2)}x of 1,000 without history`,
      },
    ];
  } finally {
    server.close();
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  for (const result of await run()) console.log(`${result.name}: ${Math.round(result.eventsPerSec)}/s ${result.note ?? ''}`);
}

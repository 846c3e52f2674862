/**
 * What a backlog costs the embedded store in memory: the heap an `EmbeddedStore` holds per stored
 * event while every event still waits for dispatch (the slow-handler case: nothing has been
 * claimed), and again after a restart has opened the same folder from its snapshot and journal.
 * Bodies (~1.2 KB, distinct ids, times and resources, as real deliveries are) stay in the journal;
 * this is the metadata and the dispatch run of each event.
 *
 * Measured in a child process started with `--expose-gc`: heap used plus typed arrays' bytes
 * (`arrayBuffers`) after full collections, before and after inserting the events. Run alone: `npm run bench -- store-memory`.
 * Env: BENCH_STORE_MEMORY_EVENTS (15,000); BENCH_STORE_MEMORY_OPEN=<store folder> also measures a
 * copy of a folder a real `serve` wrote (keep one with the slow-handler bench's BENCH_KEEP_DIR):
 * the heap it takes to open, per event and per resource, which is what history costs once events
 * are dispatched and payments fulfilled (resource, snapshot, runs and timeline of each).
 */
import { execFile } from 'node:child_process';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { silentLogger } from '../../src/log/index.js';
import { EmbeddedStore } from '../../src/store/index.js';
import { sampleBody } from '../store/fixtures/sample-event.js';

const EVENTS = Number(process.env.BENCH_STORE_MEMORY_EVENTS) || 15_000;
const WARM_UP = 1_000;
const T0 = Date.parse('2026-01-01T00:00:00Z');
const SELF = fileURLToPath(import.meta.url);

interface Measured {
  pendingBytes: number;
  reopenedBytes: number;
  /** The folder of BENCH_STORE_MEMORY_OPEN, opened. */
  history?: { bytes: number; events: number; resources: number; runs: number } | undefined;
}

export async function run(): Promise<Array<{ name: string; eventsPerSec: number; note?: string }>> {
  const { stdout } = await promisify(execFile)(process.execPath, ['--expose-gc', '--import', import.meta.resolve('tsx'), SELF, '--child'], { maxBuffer: 1 << 20 });
  const measured = JSON.parse(stdout.trim().split('\n').at(-1) as string) as Measured;
  const perEvent = (bytes: number) => Math.round(bytes / EVENTS);
  return [
    {
      name: `embedded store, heap per stored event, ${EVENTS.toLocaleString('en-US')} events all waiting for dispatch`,
      eventsPerSec: perEvent(measured.pendingBytes),
      note: `"per second" column: bytes of heap per event (${(measured.pendingBytes / 1e6).toFixed(1)} MB in all); bodies stay in the journal`,
    },
    {
      name: 'same folder reopened (a restart: snapshot + journal replayed)',
      eventsPerSec: perEvent(measured.reopenedBytes),
      note: `"per second" column: bytes of heap per event (${(measured.reopenedBytes / 1e6).toFixed(1)} MB in all)`,
    },
    ...(measured.history ? [historyRow(measured.history)] : []),
  ];
}

function historyRow({ bytes, events, resources, runs }: NonNullable<Measured['history']>) {
  return {
    name: `a folder serve wrote, opened: ${events.toLocaleString('en-US')} events, ${resources.toLocaleString('en-US')} resources, ${runs.toLocaleString('en-US')} runs`,
    eventsPerSec: Math.round(bytes / Math.max(1, events)),
    note: `"per second" column: bytes of heap per event (${(bytes / 1e6).toFixed(1)} MB in all; ${Math.round(bytes / Math.max(1, resources)).toLocaleString('en-US')} bytes per resource)`,
  };
}

/** The heap a copy of `folder` takes once opened, and what it holds. */
async function openedHistory(folder: string): Promise<Measured['history']> {
  const dir = await mkdtemp(join(tmpdir(), 'checkout-kit-bench-memory-open-'));
  try {
    // A copy: opening takes the folder's lock and may compact it when closed.
    await cp(folder, dir, { recursive: true });
    const before = await settledHeap();
    const store = new EmbeddedStore({ dir, logger: silentLogger });
    await store.open();
    const bytes = (await settledHeap()) - before;
    const events = await store.countRuns({ kind: 'event' });
    const runs = await store.countRuns({});
    const resources = (await store.listResources({ limit: Number.MAX_SAFE_INTEGER })).length;
    await store.close();
    return { bytes, events, resources, runs };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function settledHeap(): Promise<number> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('store-memory: the child must run with --expose-gc');
  // Let writes and compaction finish, then collect until nothing more is freed.
  await new Promise((resolve) => setTimeout(resolve, 1500));
  for (let i = 0; i < 4; i++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  // The event table keeps its columns in typed arrays, whose bytes are outside V8's heap.
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return heapUsed + arrayBuffers;
}

async function insert(store: EmbeddedStore, from: number, to: number): Promise<void> {
  const batch: Array<Promise<unknown>> = [];
  for (let i = from; i < to; i++) {
    const id = `evt_${i.toString().padStart(8, '0')}_${'x'.repeat(24)}`;
    const at = T0 + i;
    const body = sampleBody(id);
    batch.push(
      store.insertEvent(
        { id, type: 'payment.paid', environment: 'test', createdAt: new Date(at - 5000).toISOString(), receivedAt: new Date(at).toISOString(), resourceKind: 'payment', resourceId: `pay_${i.toString().padStart(32, '0')}`, body },
        new Date(at),
      ),
    );
    if (batch.length >= 200) await Promise.all(batch.splice(0));
  }
  await Promise.all(batch);
}

async function child(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'checkout-kit-bench-memory-'));
  try {
    const store = new EmbeddedStore({ dir, logger: silentLogger });
    await store.open();
    await insert(store, 0, WARM_UP);
    const before = await settledHeap();
    await insert(store, WARM_UP, WARM_UP + EVENTS);
    const pendingBytes = (await settledHeap()) - before;
    await store.close();

    // The reopened store holds the warm-up's events too: scaled to the same count.
    const closed = await settledHeap();
    const reopened = new EmbeddedStore({ dir, logger: silentLogger });
    await reopened.open();
    const reopenedBytes = (((await settledHeap()) - closed) * EVENTS) / (WARM_UP + EVENTS);
    await reopened.close();
    const open = process.env.BENCH_STORE_MEMORY_OPEN;
    const history = open ? await openedHistory(open) : undefined;
    process.stdout.write(`${JSON.stringify({ pendingBytes, reopenedBytes, history } satisfies Measured)}\n`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

if (process.argv.includes('--child')) await child();

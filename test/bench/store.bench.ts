/**
 * Embedded store micro-benchmark: `insertEvent` throughput (each insert durable: fsync'd) with 50
 * concurrent writers, on a store already holding 0, 10,000 and 100,000 events of ~1.2 KB. The
 * point is that the figure does not fall with history (a naive lowdb store rewrites the whole file
 * per write: 264 events/s empty, 18/s at 10,000, 0/s at 100,000).
 *
 * Run alone: `node --import tsx test/bench/store.bench.ts`.
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { silentLogger } from '../../src/log/index.js';
import { EmbeddedStore } from '../../src/store/index.js';
import { sampleEvent } from '../store/fixtures/sample-event.js';

const WRITERS = 50;
const MEASURED = 10_000;
const HISTORY = [0, 10_000, 100_000];

export async function run(): Promise<Array<{ name: string; eventsPerSec: number; note?: string }>> {
  const results = [];
  for (const stored of HISTORY) results.push(await measure(stored));
  return results;
}

async function measure(stored: number): Promise<{ name: string; eventsPerSec: number; note: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'checkout-kit-bench-'));
  try {
    const seed = new EmbeddedStore({ dir, logger: silentLogger });
    await seed.open();
    await insertMany(seed, 'seed', stored, 1000);
    await seed.close();

    // A receiver restarting on that history.
    const store = new EmbeddedStore({ dir, logger: silentLogger });
    const openedAt = performance.now();
    await store.open();
    const openMs = performance.now() - openedAt;
    const startedAt = performance.now();
    await insertMany(store, 'bench', MEASURED, WRITERS);
    const seconds = (performance.now() - startedAt) / 1000;
    const compactedAt = performance.now();
    await store.compact();
    const compactMs = performance.now() - compactedAt;
    const snapshotMb = (await stat(join(dir, 'snapshot.json'))).size / 2 ** 20;
    await store.close();
    return {
      name: `embedded insertEvent, ${WRITERS} concurrent writers, ${stored.toLocaleString('en')} events stored`,
      eventsPerSec: Math.round(MEASURED / seconds),
      note:
        `${MEASURED.toLocaleString('en')} fsync'd inserts in ${seconds.toFixed(2)} s; open ${Math.round(openMs)} ms; ` +
        `a compaction (due when the journal outgrows the ${snapshotMb.toFixed(1)} MB snapshot) takes ${Math.round(compactMs)} ms, writes going on meanwhile (only its seal holds them)`,
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Insert `count` events from `concurrency` writers, each awaiting its insert before the next. */
async function insertMany(store: EmbeddedStore, prefix: string, count: number, concurrency: number): Promise<void> {
  let next = 0;
  const writer = async () => {
    for (let i = next++; i < count; i = next++) await store.insertEvent(sampleEvent(`${prefix}_${i}`));
  };
  await Promise.all(Array.from({ length: concurrency }, writer));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  for (const result of await run()) console.log(`${result.name}: ${result.eventsPerSec} events/s (${result.note})`);
}

/**
 * The embedded store's hot path: `insertEvent` (the event and its dispatch run, durable when it
 * resolves) from 50 concurrent producers, as the receiver calls it under a burst, on a store
 * already holding 0, 100,000 and 1,000,000 events of ~1.2 KB: what history does to the rate, the
 * tail and the memory, and how long a restart on a big store waits for the store to open.
 *
 * Each measurement runs in a process of its own (tsx loaded: ~28 MB of every RSS below is the
 * loader's): it opens a copy of a folder seeded beforehand (timed: what a restarting `serve`
 * waits for), then makes BENCH_STORE_INSERTS (10,000) inserts from BENCH_STORE_WRITERS (50)
 * writers, each awaiting its insert before the next. Reported: inserts per second, p50/p99/max of
 * one insert, the event loop's longest stall meanwhile (SQLite's statements and commits run on
 * it), RSS after open and at the end, the peak (VmHWM), the store's size on disk. BENCH_STORE_ROUNDS
 * (3) rounds per history, each on a fresh copy of the seeded folder; the row gives the median round
 * and every round's rate.
 *
 * Seeding: the same events through the store's own multi-row insert (`SqlStore` with insert
 * lanes, in chunks of 20,000 concurrent inserts): on the 2-core machine 100,000 events took 13 s,
 * 1,000,000 took 282 s (random ids: the indexes on ids grow by random inserts).
 *
 * Ids are random (`evt_` and a UUID, as the service makes them), so each insert lands anywhere in
 * the indexes on ids, as real deliveries do.
 *
 * BENCH_STORE_BASELINE=<another checkout's test/bench/store.bench.ts> interleaves that file's
 * rounds with this one's (same seeding sizes, each side seeding its own store the way its file
 * does); this checkout's row then gives its ratios to the baseline's median round: how two
 * commits of the store compare in one time window.
 * That file must answer the same `--child` commands (`seed`, `measure`: one JSON line each).
 *
 * Run: `npm run bench -- store` (~10 minutes, most of it seeding the million). Env: BENCH_STORE_HISTORY (`0,100000,1000000`), BENCH_STORE_INSERTS,
 * BENCH_STORE_WRITERS, BENCH_STORE_ROUNDS, BENCH_STORE_BASELINE, BENCH_STORE_BASELINE_NAME (`baseline`).
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { cp, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { percentile } from '../support/percentile.js';
import { sampleEvent } from '../store/fixtures/sample-event.js';

const SELF = fileURLToPath(import.meta.url);
const num = (name: string, fallback: number) => (Number(process.env[name]) > 0 ? Number(process.env[name]) : fallback);
const HISTORY = (process.env.BENCH_STORE_HISTORY ?? '0,100000,1000000')
  .split(',')
  .map(Number)
  .filter((n) => Number.isFinite(n) && n >= 0);
const INSERTS = num('BENCH_STORE_INSERTS', 10_000);
const WRITERS = num('BENCH_STORE_WRITERS', 50);
const ROUNDS = num('BENCH_STORE_ROUNDS', 3);
const BASELINE = process.env.BENCH_STORE_BASELINE;
const BASELINE_NAME = process.env.BENCH_STORE_BASELINE_NAME || 'baseline';
/** Concurrent inserts per chunk while seeding. */
const SEED_CHUNK = 20_000;

/** What one measuring child reports (the `--child measure` protocol; a baseline file prints the same). */
export interface Measured {
  openMs: number;
  insertsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Longest event-loop stall during the inserts (ms). */
  loopMaxMs: number;
  rssOpenMb: number;
  rssEndMb: number;
  peakMb: number;
  diskMb: number;
}

interface Side {
  name: string;
  script: string;
}

export async function run(): Promise<Array<{ name: string; eventsPerSec: number; note?: string }>> {
  const sides: Side[] = [{ name: 'SQLite', script: SELF }, ...(BASELINE ? [{ name: BASELINE_NAME, script: BASELINE }] : [])];
  const rows = [];
  for (const stored of HISTORY) {
    const seeded = new Map<Side, { dir: string; seconds: number }>();
    const rounds = new Map<Side, Measured[]>(sides.map((side) => [side, []]));
    const failures = new Map<Side, string[]>(sides.map((side) => [side, []]));
    try {
      for (const side of sides) {
        const dir = await mkdtemp(join(tmpdir(), 'checkout-kit-bench-store-seed-'));
        seeded.set(side, { dir, seconds: 0 });
        if (stored === 0) continue;
        const started = performance.now();
        try {
          await child(side.script, { op: 'seed', dir, count: stored });
        } catch (error) {
          failures.get(side)!.push((error as Error).message);
          process.stderr.write(`bench: store ${side.name}: seeding ${fmt(stored)} events failed: ${(error as Error).message}\n`);
          continue;
        }
        seeded.get(side)!.seconds = (performance.now() - started) / 1000;
        process.stderr.write(`bench: store ${side.name}: ${fmt(stored)} events seeded in ${fmt(seeded.get(side)!.seconds)} s\n`);
      }
      // Interleaved: side A, side B, A, B… so that both meet the same moments of a shared machine.
      for (let round = 0; round < ROUNDS; round++) {
        for (const side of sides) {
          // A side whose seeding failed has nothing to measure.
          if (stored > 0 && seeded.get(side)!.seconds === 0) continue;
          const dir = await mkdtemp(join(tmpdir(), 'checkout-kit-bench-store-'));
          try {
            await cp(seeded.get(side)!.dir, dir, { recursive: true });
            const measured = await child<Measured>(side.script, { op: 'measure', dir, count: INSERTS, writers: WRITERS });
            rounds.get(side)!.push(measured);
            process.stderr.write(`bench: store ${side.name}, ${fmt(stored)} stored, round ${round + 1}: ${JSON.stringify(measured)}\n`);
          } catch (error) {
            failures.get(side)!.push((error as Error).message);
            process.stderr.write(`bench: store ${side.name}, ${fmt(stored)} stored, round ${round + 1} failed: ${(error as Error).message}\n`);
          } finally {
            await rm(dir, { recursive: true, force: true });
          }
        }
      }
      const medians = new Map(sides.map((side) => [side, rounds.get(side)!.length > 0 ? medianRound(rounds.get(side)!) : undefined]));
      // The first row (this checkout) carries the ratios against the baseline's median round.
      for (const side of sides) {
        const baseline = side === sides[0] && sides[1] ? medians.get(sides[1]) : undefined;
        rows.push(
          rounds.get(side)!.length === 0
            ? { name: rowName(side, stored), eventsPerSec: 0, note: `failed: ${failures.get(side)![0]}` }
            : row(side, stored, rounds.get(side)!, seeded.get(side)!.seconds, baseline && { name: sides[1]!.name, median: baseline }, failures.get(side)!),
        );
      }
    } finally {
      for (const { dir } of seeded.values()) await rm(dir, { recursive: true, force: true });
    }
  }
  return rows;
}

const medianRound = (rounds: Measured[]) => [...rounds].sort((a, b) => a.insertsPerSec - b.insertsPerSec)[Math.floor(rounds.length / 2)]!;
const fmt = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

const rowName = (side: Side, stored: number) => `${side.name} insertEvent (event + dispatch run, durable), ${WRITERS} writers, ${fmt(stored)} events stored`;

function row(side: Side, stored: number, rounds: Measured[], seedSeconds: number, against: { name: string; median: Measured } | undefined, failures: string[]) {
  const m = medianRound(rounds);
  const range = (pick: (r: Measured) => number, digits = 0) => {
    const values = rounds.map(pick);
    return `${fmt(Math.min(...values), digits)}–${fmt(Math.max(...values), digits)}`;
  };
  const b = against?.median;
  const ratio = b
    ? `; **against ${against.name}: rate ${fmt(m.insertsPerSec / b.insertsPerSec, 2)}×, p99 ${fmt(m.p99Ms / b.p99Ms, 2)}×, RSS at the end ${fmt(m.rssEndMb / b.rssEndMb, 2)}×, open ${fmt(m.openMs / b.openMs, 3)}×**`
    : '';
  return {
    name: rowName(side, stored),
    eventsPerSec: m.insertsPerSec,
    note:
      `median of ${rounds.length} rounds (${rounds.map((r) => fmt(r.insertsPerSec)).join(', ')}/s); ${fmt(INSERTS)} inserts: p50 ${fmt(m.p50Ms, 1)} ms, p99 ${fmt(m.p99Ms, 1)} ms (rounds ${range((r) => r.p99Ms, 1)}), max ${fmt(m.maxMs)} ms, ` +
      `longest loop stall ${fmt(m.loopMaxMs)} ms; open ${fmt(m.openMs)} ms (rounds ${range((r) => r.openMs)}); RSS ${fmt(m.rssOpenMb)} MB after open, ${fmt(m.rssEndMb)} MB at the end (rounds ${range((r) => r.rssEndMb)}), peak ${fmt(m.peakMb)} MB; ` +
      `${fmt(m.diskMb)} MB on disk` +
      (stored > 0 ? `; seeded in ${fmt(seedSeconds, 1)} s` : '') +
      ratio +
      (failures.length > 0 ? `; **${failures.length} rounds failed**: ${failures[0]}` : ''),
  };
}

/** Run `script --child <json>` under tsx and parse its last stdout line. */
async function child<T = unknown>(script: string, command: Record<string, unknown>): Promise<T> {
  try {
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', import.meta.resolve('tsx'), script, '--child', JSON.stringify(command)], {
      maxBuffer: 16 << 20,
      // Seeding a million events through another store may take many minutes.
      timeout: 60 * 60_000,
    });
    return JSON.parse(stdout.trim().split('\n').at(-1) as string) as T;
  } catch (error) {
    const { stderr, signal, code } = error as { stderr?: string; signal?: string; code?: number };
    // The thrown error's own line (`StoreError: …`), else the last line the child printed.
    const lines = (stderr ?? '').trim().split('\n').filter(Boolean);
    const why = (lines.find((line) => /^\w*Error\b/.test(line)) ?? lines.at(-1) ?? '').slice(0, 300);
    throw new Error(`${String(command.op)} of ${String(command.count)} (${signal ?? `exit ${code}`}): ${why || (error as Error).message.split('\n')[0]}`, {
      cause: error,
    });
  }
}

// ---------------------------------------------------------------------------------------------
// Child side: one store, one command.

/** An event id as the service makes them (`evt_` and a UUID): random, so each lands anywhere in an index on ids. */
const eventId = () => `evt_${randomUUID()}`;

/** Resident memory now and its peak (VmRSS, VmHWM) in MB. */
function memory(): { rss: number; peak: number } {
  const status = readFileSync('/proc/self/status', 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}

async function folderMb(dir: string): Promise<number> {
  let bytes = 0;
  for (const name of await readdir(dir)) bytes += (await stat(join(dir, name))).size;
  return bytes / 2 ** 20;
}

async function seed(dir: string, count: number): Promise<void> {
  const { SqlStore } = await import('../../src/store/sql/sql-store.js');
  const { sqliteDatabase } = await import('../../src/store/sqlite/sqlite-database.js');
  const { sqliteDialect } = await import('../../src/store/sql/dialect.js');
  const { STORE_FILE } = await import('../../src/store/sqlite/sqlite-store.js');
  const file = join(dir, STORE_FILE);
  // The store's multi-row insert: up to 8 statements of 200 events each per commit.
  const store = new SqlStore({ database: sqliteDatabase({ path: file }), dialect: sqliteDialect, schema: file, insertLanes: 8 });
  await store.open();
  for (let from = 0; from < count; from += SEED_CHUNK) {
    const to = Math.min(count, from + SEED_CHUNK);
    await Promise.all(Array.from({ length: to - from }, () => store.insertEvent(sampleEvent(eventId()))));
  }
  await store.close();
}

async function measure(dir: string, count: number, writers: number): Promise<Measured> {
  const { SqliteStore } = await import('../../src/store/sqlite/sqlite-store.js');
  // The receiver's store, as `serve` opens it (`CHECKOUT_STORE=file:<dir>`).
  const store = new SqliteStore({ dir });
  const openedAt = performance.now();
  await store.open();
  const openMs = performance.now() - openedAt;
  const rssOpenMb = memory().rss;
  const latencies: number[] = [];
  const loop = monitorEventLoopDelay({ resolution: 1 });
  loop.enable();
  const startedAt = performance.now();
  let next = 0;
  const writer = async () => {
    for (let i = next++; i < count; i = next++) {
      const event = sampleEvent(eventId());
      const t = performance.now();
      await store.insertEvent(event);
      latencies.push(performance.now() - t);
    }
  };
  await Promise.all(Array.from({ length: writers }, writer));
  const seconds = (performance.now() - startedAt) / 1000;
  loop.disable();
  const end = memory();
  await store.close();
  return {
    openMs,
    insertsPerSec: count / seconds,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    maxMs: percentile(latencies, 100),
    loopMaxMs: loop.max / 1e6,
    rssOpenMb,
    rssEndMb: end.rss,
    peakMb: end.peak,
    diskMb: await folderMb(dir),
  };
}

if (process.argv.includes('--child')) {
  const command = JSON.parse(process.argv[process.argv.indexOf('--child') + 1]!) as { op: 'seed' | 'measure'; dir: string; count: number; writers?: number };
  if (command.op === 'seed') {
    await seed(command.dir, command.count);
    process.stdout.write('{}\n');
  } else {
    process.stdout.write(`${JSON.stringify(await measure(command.dir, command.count, command.writers ?? WRITERS))}\n`);
  }
} else if (process.argv[1] === SELF) {
  for (const result of await run()) console.log(`${result.name}: ${Math.round(result.eventsPerSec)}/s (${result.note})`);
}

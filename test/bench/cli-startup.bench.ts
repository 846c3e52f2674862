/**
 * How long the CLI takes to start and finish a quick command, beside `node -e 0` in the same run:
 * the package's bin as merchants run it (`node dist/cli/main.js`, built from this checkout's src/
 * at the start of the run), for `--version`, `--help` and `events list` on an empty embedded store.
 * Goal: `--version` and `events list` within 2× of `node -e 0`.
 *
 * Each round runs every command once, in an order rotated round by round (so that no command always
 * follows the same one on a busy machine), timed from spawn to exit; rows give the median of
 * BENCH_CLI_ROUNDS (21) rounds, its quartiles, the ratio of the medians to `node -e 0`'s and the
 * median of each round's own ratio. Every run must exit 0; `--version` must print the package's
 * version and `events list` `(none)`. Each command runs in an empty folder (no `.env`) with only
 * PATH and CHECKOUT_STORE set; the store (`file:<temp>/store`) is created before the rounds by the
 * same build's `openStore`, so `events list` finds it (it refuses a store that does not exist).
 *
 * BENCH_CLI_BASELINE=<another build's dist/cli/main.js> (BENCH_CLI_BASELINE_NAME: `baseline`) runs
 * that bin's commands too, interleaved in the same rounds (with its own store, created by its own
 * build); BENCH_CLI=<a dist/cli/main.js> measures that bin instead of building this checkout's.
 *
 * Run: `npm run bench -- cli-startup`.
 */
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir, loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { percentile } from '../support/percentile.js';
import type { BenchResult } from './load.js';

const REPO = fileURLToPath(new URL('../../', import.meta.url));

/** A positive whole number from the bench's environment, else `fallback`. */
function envRounds(name: string, fallback: number): number {
  const value = Number(process.env[name]);
  return Number.isSafeInteger(value) && value > 0 ? value : fallback;
}

const ROUNDS = envRounds('BENCH_CLI_ROUNDS', 21);

interface Side {
  name: string;
  /** The bin: a built `dist/cli/main.js`. */
  cli: string;
  /** The folder the commands run in; the store is `store` inside it. */
  dir: string;
}

interface Probe {
  /** The row's name. */
  name: string;
  argv: string[];
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** What stdout must hold (checked on every run). */
  expect?: RegExp;
  /** The goal, in times `node -e 0`'s median. */
  goal?: number;
  /** Milliseconds from spawn to exit, one per round. */
  ms: number[];
}

/** Build dist/ from src/ (`npm run build`), so the bin is this checkout's code. */
function build(): void {
  const tsc = spawnSync(process.execPath, [join(REPO, 'node_modules/typescript/bin/tsc'), '-p', join(REPO, 'tsconfig.json')], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  if (tsc.status !== 0) throw new Error(`bench: building dist/ failed (tsc exited ${tsc.status}); run npm run build to see why`);
}

/** Create the empty embedded store in `dir`/store with the `openStore` of the build `cli` belongs to. */
function createStore(cli: string, dir: string): void {
  const open = pathToFileURL(join(dirname(cli), '../store/open.js')).href;
  const script = `const { openStore } = await import(${JSON.stringify(open)}); const store = await openStore(process.argv[1]); await store.close();`;
  const made = spawnSync(process.execPath, ['--input-type=module', '-e', script, `file:${join(dir, 'store')}`], { cwd: dir, encoding: 'utf8' });
  if (made.status !== 0) throw new Error(`bench: creating the store with ${open} failed: ${made.stderr.trim()}`);
}

/** One run of `probe`, timed from spawn to exit. */
function once(probe: Probe): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(process.execPath, probe.argv, { cwd: probe.cwd, env: probe.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      if (code !== 0) reject(new Error(`bench: ${probe.name} exited ${code}: ${stderr.trim().split('\n')[0]}`));
      else if (probe.expect && !probe.expect.test(stdout))
        reject(new Error(`bench: ${probe.name} printed ${JSON.stringify(stdout.slice(0, 200))}, not ${probe.expect}`));
      else resolve(ms);
    });
  });
}

const median = (values: number[]) => percentile(values, 50);
const fmt = (ms: number) => `${Math.round(ms)} ms`;
const loads = () =>
  loadavg()
    .map((n) => n.toFixed(2))
    .join(', ');

export async function run(): Promise<BenchResult[]> {
  const sides: Side[] = [];
  const scratch = await mkdtemp(join(tmpdir(), 'checkout-kit-cli-startup-'));
  try {
    let cli = process.env.BENCH_CLI;
    if (!cli) {
      build();
      cli = join(REPO, 'dist/cli/main.js');
    }
    sides.push({ name: 'checkout-kit', cli, dir: join(scratch, 'this') });
    if (process.env.BENCH_CLI_BASELINE)
      sides.push({ name: process.env.BENCH_CLI_BASELINE_NAME || 'baseline', cli: process.env.BENCH_CLI_BASELINE, dir: join(scratch, 'baseline') });
    const version = (JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string }).version;

    const node: Probe = { name: 'node -e 0', argv: ['-e', '0'], env: { PATH: process.env.PATH }, cwd: scratch, ms: [] };
    const probes: Probe[] = [node];
    for (const side of sides) {
      await mkdir(side.dir);
      createStore(side.cli, side.dir);
      const env = { PATH: process.env.PATH, CHECKOUT_STORE: `file:${join(side.dir, 'store')}` };
      const label = sides.length > 1 ? ` (${side.name})` : '';
      probes.push(
        {
          name: `checkout-kit --version${label}`,
          argv: [side.cli, '--version'],
          env,
          cwd: side.dir,
          expect: side === sides[0] && !process.env.BENCH_CLI ? new RegExp(`^${version.replaceAll('.', '\\.')}\\n$`) : /^\S+\n$/,
          goal: 2,
          ms: [],
        },
        { name: `checkout-kit --help${label}`, argv: [side.cli, '--help'], env, cwd: side.dir, expect: /^Usage: checkout-kit /, ms: [] },
        {
          name: `checkout-kit events list, empty store${label}`,
          argv: [side.cli, 'events', 'list'],
          env,
          cwd: side.dir,
          expect: /^\(none\)\n$/,
          goal: 2,
          ms: [],
        },
      );
    }

    const loadBefore = loads();
    // One warm-up round (the file cache), not counted.
    for (const probe of probes) await once(probe);
    for (let round = 0; round < ROUNDS; round++) {
      for (let i = 0; i < probes.length; i++) {
        const probe = probes[(round + i) % probes.length]!;
        probe.ms.push(await once(probe));
      }
    }
    const loadAfter = loads();

    const base = median(node.ms);
    return probes.map((probe) => {
      const m = median(probe.ms);
      const spread = `p25–p75 ${fmt(percentile(probe.ms, 25))}–${fmt(percentile(probe.ms, 75))}`;
      if (probe === node) {
        return {
          name: probe.name,
          eventsPerSec: 1000 / m,
          note: `median ${fmt(m)} (${spread}) of ${ROUNDS} rounds; load average ${loadBefore} before, ${loadAfter} after`,
        };
      }
      const perRound = median(probe.ms.map((ms, round) => ms / node.ms[round]!));
      return {
        name: probe.name,
        eventsPerSec: 1000 / m,
        note: `median ${fmt(m)} (${spread}): **${(m / base).toFixed(2)}×** node -e 0 (median of each round's ratio ${perRound.toFixed(2)}×)${probe.goal ? `; goal ≤ ${probe.goal}×` : ''}`,
      };
    });
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../../src/log/index.js';
import type { Store } from '../../src/store/index.js';
import type { RaceResult, WorkerArgs } from './fixtures/store-worker.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const WORKER = fileURLToPath(new URL('./fixtures/store-worker.ts', import.meta.url));

/** Temp folders and child processes of one test file, removed and killed by `cleanUp`. */
export class Scratch {
  private dirs: string[] = [];
  private children: ChildProcessWithoutNullStreams[] = [];

  async dir(): Promise<string> {
    const dir = await mkdtemp(join(tmpdir(), 'checkout-kit-store-'));
    this.dirs.push(dir);
    return dir;
  }

  /** Start `fixtures/store-worker.ts` in its own Node process. */
  worker(args: WorkerArgs): Worker {
    const child = spawn(process.execPath, ['--import', 'tsx', WORKER, JSON.stringify(args)], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
    this.children.push(child);
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    return {
      child,
      exited,
      lines,
      async nextLine() {
        const next = await lines.next();
        if (next.done) throw new Error(`worker exited (${await exited}) before answering: ${stderr}`);
        return next.value;
      },
    };
  }

  /**
   * Start one `race` worker per entry; once every one has said `ready`, let them all go at once
   * (each opens the store then); their results, in the same order.
   */
  async race(list: Array<Extract<WorkerArgs, { mode: 'race' }>>): Promise<RaceResult[]> {
    const workers = list.map((args) => this.worker(args));
    for (const worker of workers) if ((await worker.nextLine()) !== 'ready') throw new Error('a worker did not start');
    for (const worker of workers) worker.child.stdin.write('go\n');
    return Promise.all(workers.map(async (worker) => JSON.parse(await worker.nextLine()) as RaceResult));
  }

  async cleanUp(): Promise<void> {
    for (const child of this.children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    for (const dir of this.dirs.splice(0)) await rm(dir, { recursive: true, force: true });
  }
}

export interface Worker {
  child: ChildProcessWithoutNullStreams;
  exited: Promise<number | null>;
  lines: AsyncIterator<string>;
  nextLine(): Promise<string>;
}

/** Every file of a folder and its bytes (to assert that nothing was touched). */
export async function filesOf(dir: string): Promise<Record<string, Buffer>> {
  const out: Record<string, Buffer> = {};
  for (const name of (await readdir(dir)).sort()) if ((await stat(join(dir, name))).isFile()) out[name] = await readFile(join(dir, name));
  return out;
}

/** A logger that keeps warnings and errors for assertions. */
export function recordingLogger(): Logger & { warnings: string[]; errors: string[] } {
  const warnings: string[] = [];
  const errors: string[] = [];
  const message = (obj: object | string, msg?: string) => msg ?? (typeof obj === 'string' ? obj : JSON.stringify(obj));
  return {
    warnings,
    errors,
    debug() {},
    info() {},
    warn: (obj, msg) => warnings.push(message(obj, msg)),
    error: (obj, msg) => errors.push(message(obj, msg)),
  };
}

/** Everything a store holds, in a comparable order. */
export async function everything(store: Store) {
  const byKey = <T>(items: T[], key: (item: T) => string) => [...items].sort((a, b) => key(a).localeCompare(key(b)));
  return {
    events: byKey(await store.listEvents({ limit: 1_000_000 }), (event) => event.id),
    runs: byKey(await store.listRuns({ limit: 1_000_000 }), (run) => run.key),
    resources: byKey(await store.listResources({ limit: 1_000_000 }), (record) => `${record.kind}:${record.id}`),
    deadLetters: await store.listDeadLetters(1_000_000),
  };
}

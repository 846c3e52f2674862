import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { sqliteDialect } from '../../src/store/sql/dialect.js';
import { migrationsTable } from '../../src/store/sql/migrate.js';
import { MIGRATIONS } from '../../src/store/sql/migrations.js';
import { sqliteDatabase } from '../../src/store/sqlite/sqlite-database.js';
import { STORE_FILE } from '../../src/store/sqlite/sqlite-store.js';
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

/** Write, in `dir`, an embedded store at schema version 1 (no rows): what a later version's `migrate` has work to do on. */
export async function sqliteStoreAtVersionOne(dir: string): Promise<void> {
  const database = sqliteDatabase({ path: join(dir, STORE_FILE) });
  await database.transaction(async (tx) => {
    for (const text of [migrationsTable(sqliteDialect), ...MIGRATIONS[0]!.statements(sqliteDialect)]) await tx.query({ text });
    await tx.query({
      text: 'INSERT INTO schema_migrations (version, name, applied_at) VALUES (1, $1, $2)',
      values: [MIGRATIONS[0]!.name, new Date().toISOString()],
    });
  });
  await database.close();
}

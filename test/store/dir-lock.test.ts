import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, readFile, rm, rmdir, stat, utimes } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { DirLock, LOCK_NAME, type DirLockOptions } from '../../src/store/embedded/dir-lock.js';
import { Scratch } from './helpers.js';
import type { LockWorkerArgs } from './fixtures/lock-worker.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const WORKER = fileURLToPath(new URL('./fixtures/lock-worker.ts', import.meta.url));
/** What the storm test runs against: set `LOCK_STORM_MECHANISM=directory` to watch the old lock fail it. */
const STORM_MECHANISM = (process.env.LOCK_STORM_MECHANISM ?? 'auto') as LockWorkerArgs['mechanism'];

const scratch = new Scratch();
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await scratch.cleanUp();
});

function lockOf(dir: string, options: Partial<DirLockOptions> = {}): DirLock {
  return new DirLock(dir, { staleMs: 10 * 60_000, disabled: false, onCompromised: () => undefined, ...options });
}

function startWorker(args: LockWorkerArgs): { child: ChildProcess; held: Promise<void> } {
  const child = spawn(process.execPath, ['--import', 'tsx', WORKER, JSON.stringify(args)], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  const held = new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stdout! }).on('line', (line) => line === 'held' && resolve());
    child.on('exit', (code) => reject(new Error(`lock worker exited (${code}) before holding the lock`)));
  });
  held.catch(() => undefined); // storm workers never print it
  return { child, held };
}

async function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise((resolve) => child.once('exit', resolve));
}

describe('DirLock', () => {
  it('uses the kernel file lock on this platform', async () => {
    expect(lockOf(await scratch.dir()).mechanism).toBe('kernel');
  });

  it.each(['auto', 'directory'] as const)('(%s) lets one holder in at a time, also between two instances of one process', async (mechanism) => {
    const dir = await scratch.dir();
    const [a, b] = [lockOf(dir, { mechanism, staleMs: 10_000 }), lockOf(dir, { mechanism, staleMs: 10_000 })];
    const trace: string[] = [];
    const hold = (name: string, lock: DirLock) =>
      lock.with(async () => {
        trace.push(`${name} in`);
        await sleep(20);
        trace.push(`${name} out`);
      });
    await Promise.all([hold('a1', a), hold('b1', b), hold('a2', a), hold('b2', b)]);
    expect(trace).toHaveLength(8);
    for (let i = 0; i < 8; i += 2) expect(trace[i + 1], trace.join(', ')).toBe(trace[i]!.replace(' in', ' out'));
    await a.close();
    await b.close();
  });

  /** `lock.with` holding until `gate` is opened; `entered` resolves once inside. */
  function holdUntil(lock: DirLock, trace: string[], name: string) {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    let inside!: () => void;
    const entered = new Promise<void>((resolve) => (inside = resolve));
    const done = lock.with(async () => {
      trace.push(`${name} in`);
      inside();
      await gate;
      trace.push(`${name} out`);
    });
    return { entered, release: () => open(), done };
  }

  it('keeps out a holder whose store.lock was deleted and made anew meanwhile (it reopens the new file)', async () => {
    const dir = await scratch.dir();
    const [a, b] = [lockOf(dir), lockOf(dir)];
    await a.with(async () => undefined); // a has the first store.lock open
    await rm(join(dir, LOCK_NAME));
    const trace: string[] = [];
    const holder = holdUntil(b, trace, 'b');
    await holder.entered; // b holds the new file's lock
    const other = a.with(async () => void trace.push('a in'));
    await sleep(200);
    expect(trace).toEqual(['b in']);
    holder.release();
    await Promise.all([holder.done, other]);
    expect(trace).toEqual(['b in', 'b out', 'a in']);
    await a.close();
    await b.close();
  });

  it('closed while held, keeps the lock until its holder is done, and refuses to be taken again', async () => {
    const dir = await scratch.dir();
    const [a, b] = [lockOf(dir), lockOf(dir)];
    const trace: string[] = [];
    const holder = holdUntil(a, trace, 'a');
    await holder.entered;
    await a.close();
    const other = b.with(async () => void trace.push('b in'));
    await sleep(200);
    expect(trace).toEqual(['a in']);
    holder.release();
    await Promise.all([holder.done, other]);
    expect(trace).toEqual(['a in', 'a out', 'b in']);
    await expect(a.with(async () => undefined)).rejects.toThrow(/closed with its store/);
    await b.close();
  });

  it("takes a SIGKILLed holder's lock at once: the kernel dropped it, nothing had to go stale", async () => {
    const dir = await scratch.dir();
    const worker = startWorker({ mode: 'hold', dir, mechanism: 'auto', staleMs: 10 * 60_000 });
    await worker.held;
    // Held by a live process: a try now would wait (proved by the storm below); kill it.
    worker.child.kill('SIGKILL');
    await exited(worker.child);
    // With a ten-minute stale time, a directory lock would wait a minute here and then throw.
    const lock = lockOf(dir);
    await expect(lock.with(async () => 'mine')).resolves.toBe('mine');
    await lock.close();
  });

  it('removes a stale lock directory an earlier version left behind, and waits for a fresh one', async () => {
    const dir = await scratch.dir();
    const legacy = join(dir, LOCK_NAME);
    await mkdir(legacy);
    const old = new Date(Date.now() - 60_000);
    await utimes(legacy, old, old);
    const lock = lockOf(dir, { staleMs: 10_000 });
    await expect(lock.with(async () => 'after the stale one')).resolves.toBe('after the stale one');
    expect((await stat(legacy)).isFile()).toBe(true);
    await lock.close();

    const fresh = await scratch.dir();
    await mkdir(join(fresh, LOCK_NAME));
    const waiting = lockOf(fresh, { staleMs: 10_000 });
    let entered = false;
    const done = waiting.with(async () => (entered = true));
    await sleep(300);
    expect(entered).toBe(false);
    // Its holder (an earlier version's process) lets go.
    await rmdir(join(fresh, LOCK_NAME));
    await done;
    expect(entered).toBe(true);
    await waiting.close();
  });

  it(
    `(${STORM_MECHANISM}) never has two holders while processes holding it are SIGKILLed and others race to take it`,
    async () => {
      const dir = await scratch.dir();
      const log = join(dir, 'holders.log');
      /** Each killed process, and how many lines the log had before the kill was sent. */
      const killed = new Map<number, number>();
      const logLines = async () => (await readFile(log, 'utf8').catch(() => '')).split('\n').filter(Boolean);
      const kill = async (child: ChildProcess) => {
        killed.set(child.pid!, (await logLines()).length);
        child.kill('SIGKILL');
        await exited(child);
      };
      // Each worker says when it is inside a long hold: that is when it is killed, so others must take over.
      let onInside: (child: ChildProcess) => void = () => undefined;
      const start = () => {
        const child = startWorker({ mode: 'storm', dir, mechanism: STORM_MECHANISM, staleMs: 2000, log }).child;
        createInterface({ input: child.stdout! }).on('line', (line) => line === 'inside' && onInside(child));
        return child;
      };
      const workers = Array.from({ length: 4 }, start);
      // At least the storm's time, and on a busy machine longer, until it has done what it is for
      // (asserted below: over 50 entries, holders killed inside), up to a cap.
      const begun = performance.now();
      const until = begun + Number(process.env.LOCK_STORM_SECONDS ?? 8) * 1000;
      const enough = async () => killed.size > 2 && (await logLines()).filter((line) => line.endsWith(' enter')).length > 50;
      while (performance.now() < until || (performance.now() < begun + 60_000 && !(await enough()))) {
        const inside = await Promise.race([new Promise<ChildProcess>((resolve) => (onInside = resolve)), sleep(3000).then(() => undefined)]);
        onInside = () => undefined;
        if (!inside) continue;
        const victim = workers.indexOf(inside);
        if (victim < 0) continue;
        await kill(inside);
        workers[victim] = start();
      }
      for (const child of workers) await kill(child);

      let holder: number | undefined;
      let takeovers = 0;
      let entries = 0;
      const overlaps: string[] = [];
      (await logLines()).forEach((line, index) => {
        const [pidText, what] = line.split(' ');
        const pid = Number(pidText);
        if (what === 'enter') {
          entries += 1;
          if (holder !== undefined) {
            // Only a holder killed inside may be followed by another's entry, and not before the kill.
            if (index >= (killed.get(holder) ?? Infinity)) takeovers += 1;
            else overlaps.push(`line ${index + 1}: ${pid} entered while ${holder} held it`);
          }
          holder = pid;
        } else {
          if (holder !== pid) overlaps.push(`line ${index + 1}: ${pid} left while ${holder ?? 'nobody'} held it`);
          holder = undefined;
        }
      });
      console.log(`lock storm (${STORM_MECHANISM}): ${entries} entries, ${takeovers} taken over from a killed holder, ${overlaps.length} overlaps`);
      expect(overlaps).toEqual([]);
      // The storm did what it is for: holders died inside and others took over, many times.
      expect(entries).toBeGreaterThan(50);
      expect(takeovers).toBeGreaterThan(1);
    },
    120_000,
  );
});

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, readFile, stat, utimes } from 'node:fs/promises';
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
    await import('node:fs/promises').then(({ rmdir }) => rmdir(join(fresh, LOCK_NAME)));
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
      const start = () => startWorker({ mode: 'storm', dir, mechanism: STORM_MECHANISM, staleMs: 2000, log }).child;
      const workers = Array.from({ length: 4 }, start);
      const until = performance.now() + Number(process.env.LOCK_STORM_SECONDS ?? 8) * 1000;
      while (performance.now() < until) {
        await sleep(300 + Math.random() * 200);
        // Kill whoever holds it now (the last line is its entry), so that others must take over.
        const last = (await logLines()).at(-1) ?? '';
        const holding = last.endsWith(' enter') ? workers.findIndex((child) => `${child.pid} enter` === last) : -1;
        const victim = holding >= 0 ? holding : Math.floor(Math.random() * workers.length);
        await kill(workers[victim]!);
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
      expect(overlaps).toEqual([]);
      // The storm did what it is for: holders died inside and others took over, many times.
      expect(entries).toBeGreaterThan(100);
      expect(takeovers).toBeGreaterThan(5);
    },
    120_000,
  );
});

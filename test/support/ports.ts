import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A free TCP port on 127.0.0.1 (for a child process that must be told its port up front).
 * Taken below the kernel's ephemeral range, in a block of its own per vitest worker, never the
 * same twice in a process, and reserved for this process's life (see `reserve`): a port from
 * `listen(0)` would be free again once closed, and a parallel worker's `listen(0)`, an outgoing
 * connection, or another copy of the suite running beside this one could take it before the child
 * binds it, or while a test has stopped the child and is about to start it again on that port.
 * Falls back to `listen(0)` where the ephemeral range leaves no room below it.
 */
export async function freePort(): Promise<number> {
  const block = portBlock();
  if (!block) return kernelPort();
  for (let tries = 0; tries < block.size; tries++) {
    const port = block.start + (nextInBlock++ % block.size);
    if (reserve(port) && (await canBind(port))) return port;
  }
  return kernelPort();
}

/** One file per port handed out, holding the pid of the process it was handed to, in a folder every copy of the suite shares. */
const RESERVATIONS = join(tmpdir(), 'checkout-kit-test-ports');
const reserved: number[] = [];

/**
 * Reserve `port` for this process: false when a live process holds it. A reservation outlives
 * the process only as a file naming a dead pid, which the next process to want the port removes.
 */
function reserve(port: number): boolean {
  mkdirSync(RESERVATIONS, { recursive: true });
  const file = join(RESERVATIONS, String(port));
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      if (reserved.push(port) === 1) process.once('exit', () => reserved.forEach((held) => rmSync(join(RESERVATIONS, String(held)), { force: true })));
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = readFileSync(file, 'utf8');
      // Empty: another process has just created it and is writing its pid.
      if (holder === '' || isAlive(Number(holder))) return false;
      rmSync(file, { force: true });
    }
  }
  return false;
}

function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

const BLOCK_SIZE = 2000;
const BLOCKS = 4;
let nextInBlock = Math.floor(Math.random() * BLOCK_SIZE);
let block: { start: number; size: number } | null | undefined;

function portBlock(): { start: number; size: number } | null {
  if (block !== undefined) return block;
  let ephemeralLow = 32768;
  try {
    ephemeralLow = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || ephemeralLow;
  } catch {
    // Not Linux: assume its usual range.
  }
  const first = ephemeralLow - BLOCKS * BLOCK_SIZE;
  const worker = Number(process.env.VITEST_POOL_ID ?? 0) % BLOCKS;
  block = first < 10_000 ? null : { start: first + worker * BLOCK_SIZE, size: BLOCK_SIZE };
  return block;
}

function canBind(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** A port the kernel picks (`listen(0)`), freed again at once. */
async function kernelPort(): Promise<number> {
  const held = await holdPort();
  await held.release();
  return held.port;
}

/** A port of 127.0.0.1 held open by a plain server (to test what a process does with a taken port); `release()` frees it. */
export async function holdPort(): Promise<{ port: number; release(): Promise<void> }> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  return { port, release: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

/** Start a fastify app (or anything with its `listen` and `server`) on a free port of 127.0.0.1; the port. */
export async function listenOnLoopback(app: {
  listen(options: { port: number; host: string }): Promise<unknown>;
  server: { address(): AddressInfo | string | null };
}): Promise<number> {
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  return typeof address === 'object' && address ? address.port : 0;
}

/** Poll `check` until it returns a value or the timeout passes. */
export async function eventually<T>(check: () => Promise<T | undefined> | T | undefined, timeoutMs = 60_000, intervalMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

import { readFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';

/**
 * A free TCP port on 127.0.0.1 (for a child process that must be told its port up front).
 * Taken below the kernel's ephemeral range, in a block of its own per vitest worker, and never
 * the same twice in a process: a port from `listen(0)` would be free again once closed, and a
 * parallel worker's `listen(0)` or outgoing connection could take it before the child binds it.
 * Falls back to `listen(0)` where the ephemeral range leaves no room below it.
 */
export async function freePort(): Promise<number> {
  const block = portBlock();
  if (!block) return kernelPort();
  for (let tries = 0; tries < block.size; tries++) {
    const port = block.start + (nextInBlock++ % block.size);
    if (await canBind(port)) return port;
  }
  return kernelPort();
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

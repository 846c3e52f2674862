import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { stopProcess, waitForLine } from '../../support/cli.js';
import { bundle, expectWorkerReceives, runtimeBinary, WORKER_ENV } from './support.js';

/**
 * Bundle `runner` (a fixture that serves the Worker with the runtime's own HTTP server), start it with
 * `bun` or `deno` on a loopback port, run the checks, stop it. Resolves with the Worker's view of Node's globals.
 */
export async function runWorkerOn(runtime: 'bun' | 'deno', args: (file: string) => string[]) {
  const binary = runtimeBinary(runtime);
  const runner = await bundle(`serve-${runtime}.mjs`);
  const child = spawn(binary, args(runner.file), {
    cwd: runner.dir,
    env: { PATH: process.env.PATH, HOME: runner.dir, DENO_DIR: join(runner.dir, '.deno'), DENO_NO_UPDATE_CHECK: '1', NO_COLOR: '1', ...WORKER_ENV },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  try {
    const [, port, version] = await waitForLine(child, /listening (\d+) (\S+ \S+)/, 20_000);
    return { version, globals: await expectWorkerReceives(`http://127.0.0.1:${port}`) };
  } finally {
    await stopProcess(child, 2000);
    await runner.remove();
  }
}

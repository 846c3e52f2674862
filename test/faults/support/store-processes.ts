import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { stopProcess } from '../../support/cli.js';
import { createHash } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { samplePayment, sampleEvent } from '../../../src/testing/index.js';
import { signWebhook } from '../../../src/webhooks/index.js';
import { CLI_MAIN, TSX_LOADER, waitForLine } from '../../support/cli.js';

/** The fulfillment module of these scenarios (see the file). */
export const STORE_FULFILLMENT = fileURLToPath(new URL('./store-fulfillment.mjs', import.meta.url));

export interface StartOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  faketime?: string | undefined;
  script?: string | undefined;
  preload?: string[] | undefined;
}

/** Child processes of one test file; `stopAll()` in afterEach / afterAll. */
export class Processes {
  private readonly children = new Set<ChildProcess>();

  /**
   * Start the CLI as a child process (`node --import tsx src/cli/main.ts …`), under `faketime`
   * when `faketime` gives its spec (e.g. `+0 x50`: the process's clocks run 50 times as fast);
   * `script` runs another TypeScript file the same way; `preload` modules are imported first (after tsx).
   */
  start(args: string[], options: StartOptions): ChildProcess {
    // libfaketime preloaded into node itself, not the `faketime` wrapper: the wrapper does not pass
    // SIGTERM on, so stopping it would orphan the node process.
    const faked = options.faketime ? { LD_PRELOAD: LIBFAKETIME, FAKETIME: options.faketime } : {};
    const preload = (options.preload ?? []).flatMap((module) => ['--import', module]);
    const child = spawn(process.execPath, ['--import', TSX_LOADER, ...preload, options.script ?? CLI_MAIN, ...args], {
      cwd: options.cwd,
      env: { PATH: process.env.PATH, ...options.env, ...faked },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.children.add(child);
    child.once('exit', () => this.children.delete(child));
    return child;
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.children].map((child) => stop(child, 5_000)));
  }
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves with the exit code. */
export const stop = stopProcess;

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Run a CLI command (or `script`) to its end. */
export async function cli(processes: Processes, args: string[], options: StartOptions): Promise<CliResult> {
  const child = processes.start(args, options);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', (exitCode) => resolve(exitCode)));
  return { code, stdout, stderr };
}

/** A running `serve`, with its stderr kept. */
export interface Serve {
  child: ChildProcess;
  stderr(): string;
}

/** Start `serve` (with `args` after its port and host) and wait until it listens; rejects (with its output) when it exits first. */
export async function startServe(processes: Processes, port: number, options: StartOptions & { args?: string[] }): Promise<Serve> {
  const child = processes.start(['serve', '--port', String(port), '--host', '127.0.0.1', ...(options.args ?? [])], options);
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  await waitForLine(child, /checkout-kit serve listening on/, 30_000);
  return { child, stderr: () => stderr };
}

/** A delivery for a new payment (pending: its dispatch stores the resource, no handler runs). `pad` bytes of extra data. */
export function delivery(id: string, pad = 0): { id: string; body: string } {
  const data = { ...samplePayment({ referenceId: `order-${id}` }), ...(pad > 0 ? { note: 'x'.repeat(pad) } : {}) };
  return { id, body: JSON.stringify({ ...sampleEvent('payment.created', data), id }) };
}

/** Send one signed delivery to serve's receiver; its status and JSON answer. */
export async function deliver(port: number, secret: string, id: string, body: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`http://127.0.0.1:${port}/webhooks/checkout`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...signWebhook({ id, body, secret }) },
    body,
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** sha256 of every file directly in `dir` (folders such as the lock or a backup are left out). */
export async function fileHashes(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const name of (await readdir(dir)).sort()) {
    const path = join(dir, name);
    if ((await stat(path)).isFile())
      out[name] = createHash('sha256')
        .update(await readFile(path))
        .digest('hex');
  }
  return out;
}

/** Debian's libfaketime (installed by .ci/setup), as its `faketime` wrapper preloads it (`$LIB` is expanded by ld.so). */
const LIBFAKETIME = '/usr/$LIB/faketime/libfaketime.so.1';

/** Whether preloading libfaketime moves node's clock here. */
export function faketimeAvailable(): boolean {
  const probe = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(Date.now()))'], {
    env: { LD_PRELOAD: LIBFAKETIME, FAKETIME: '+10d' },
    encoding: 'utf8',
  });
  return Number(probe.stdout) > Date.now() + 9 * 86_400_000;
}

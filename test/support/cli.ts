import { spawn, type ChildProcess } from 'node:child_process';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { run } from '../../src/cli/program.js';
import type { SandboxHandle } from '../../src/sandbox/index.js';

export const CLI_MAIN = fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url));
export const TSX_LOADER = import.meta.resolve('tsx');

/** Run the CLI in this process with captured output. */
export async function runCli(args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv; tty?: boolean }) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  Object.assign(stderr, { isTTY: options.tty ?? false });
  const code = await run(['node', 'checkout-kit', ...args], { stdout, stderr, env: options.env ?? {}, cwd: options.cwd });
  return { code, stdout: out, stderr: err };
}

/**
 * Start the CLI as a child process (`node --import tsx src/cli/main.ts …`); `preload`: module URLs
 * imported before it (a fixture that pauses the command at a known point).
 */
export function spawnCli(args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv; stdin?: 'pipe'; preload?: readonly string[] }): ChildProcess {
  const preloads = (options.preload ?? []).flatMap((url) => ['--import', url]);
  return spawn(process.execPath, ['--import', TSX_LOADER, ...preloads, CLI_MAIN, ...args], {
    cwd: options.cwd,
    env: { PATH: process.env.PATH, ...options.env },
    stdio: [options.stdin ?? 'ignore', 'pipe', 'pipe'],
  });
}

/** Resolve with the first stdout line matching `pattern` (rejects if the process exits first). */
export function waitForLine(child: ChildProcess, pattern: RegExp, timeoutMs = 30_000): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    let buffer = '';
    let errors = '';
    const timer = setTimeout(() => reject(new Error(`timed out waiting for ${pattern}; stdout: ${buffer}; stderr: ${errors}`)), timeoutMs);
    child.stderr?.on('data', (chunk: Buffer) => (errors += chunk.toString()));
    child.stdout?.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const match = pattern.exec(buffer);
      if (match) {
        clearTimeout(timer);
        resolve(match);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`process exited (${code}) before ${pattern}; stdout: ${buffer}; stderr: ${errors}`));
    });
  });
}

/** Run the CLI as a child process to the end; `input` is written to its standard input. */
export function execCli(
  args: string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv; input?: string },
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawnCli(args, { ...options, stdin: options.input === undefined ? undefined : 'pipe' });
  if (options.input !== undefined) child.stdin?.end(options.input);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr })));
}

/**
 * The environment of a CLI process that works with `sandbox` as its test merchant, warnings only,
 * plus `extra`. `invoiceKey: false` leaves CHECKOUT_INVOICE_KEY out (payments only).
 */
export function sandboxEnv(sandbox: SandboxHandle, extra: Record<string, string> = {}, options: { invoiceKey?: boolean } = {}): Record<string, string> {
  const { merchant } = sandbox.credentials.test;
  return {
    CHECKOUT_BASE_URL: sandbox.url,
    CHECKOUT_API_KEY: merchant.apiKey,
    CHECKOUT_SIGNING_SECRET: merchant.signingSecret,
    ...(options.invoiceKey === false ? {} : { CHECKOUT_INVOICE_KEY: merchant.invoiceKey }),
    CHECKOUT_WEBHOOK_SECRET: sandbox.credentials.webhookSecret,
    LOG_LEVEL: 'warn',
    ...extra,
  };
}

/** SIGTERM every child still running and wait for its exit (no SIGKILL); empties `children`. */
export async function terminateAll(children: ChildProcess[]): Promise<void> {
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
  }
}

/** Signal a child process and wait for its exit (SIGTERM, then SIGKILL after `graceMs`); its exit code. */
export async function stopProcess(child: ChildProcess, graceMs = 10_000): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  const code = await exited;
  clearTimeout(timer);
  return code;
}

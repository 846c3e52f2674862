/**
 * The child processes of a faults scenario: the real `checkout-kit` commands (node --import tsx
 * src/cli/main.ts …, as test/support/cli.ts starts them), optionally under `faketime`, every one
 * remembered so that `killAll()` (afterEach/afterAll) leaves nothing running.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { CLI_MAIN, TSX_LOADER } from '../../support/cli.js';

/** Most bytes of a child's stdout / stderr kept (the tail). */
const KEEP = 256 * 1024;

export interface Proc {
  name: string;
  child: ChildProcess;
  pid: number;
  /** Output so far (the last 256 KiB). */
  stdout(): string;
  stderr(): string;
  /** Resolves when the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  alive(): boolean;
}

export interface SpawnOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Run under `faketime -f <offset>` (e.g. `+290`: the process's clock is 290 s ahead). */
  faketime?: string | undefined;
  /** Keep the whole stdout (a command whose JSON answer is read), not only its tail. */
  wholeStdout?: boolean;
  /** Modules imported before the CLI (after tsx), e.g. support/store-calls.ts. */
  preload?: string[] | undefined;
}

/** Whether `faketime` (libfaketime's wrapper, installed by .ci/setup) can be run here. */
export function hasFaketime(): boolean {
  return spawnSync('faketime', ['-f', '+0', 'true'], { stdio: 'ignore' }).status === 0;
}

export class Procs {
  private readonly all = new Set<Proc>();

  /** Start `checkout-kit <args>` as a child process. */
  cli(name: string, args: string[], options: SpawnOptions): Proc {
    const node = [process.execPath, '--import', TSX_LOADER, ...(options.preload ?? []).flatMap((module) => ['--import', module]), CLI_MAIN, ...args];
    const [command, ...rest] = options.faketime ? ['faketime', '-f', options.faketime, ...node] : node;
    const child = spawn(command!, rest, { cwd: options.cwd, env: { PATH: process.env.PATH, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (!options.wholeStdout && out.length > 2 * KEEP) out = out.slice(-KEEP);
    });
    child.stderr!.on('data', (chunk: Buffer) => {
      err += chunk.toString();
      if (err.length > 2 * KEEP) err = err.slice(-KEEP);
    });
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
      child.once('exit', (code, signal) => resolve({ code, signal }));
      child.once('error', () => resolve({ code: null, signal: null }));
    });
    const proc: Proc = {
      name,
      child,
      pid: child.pid ?? -1,
      stdout: () => out,
      stderr: () => err,
      exited,
      alive: () => child.exitCode === null && child.signalCode === null,
    };
    this.all.add(proc);
    void exited.then(() => this.all.delete(proc));
    return proc;
  }

  /** Run `checkout-kit <args>` to its end (SIGKILLed after `timeoutMs`). */
  async run(
    name: string,
    args: string[],
    options: SpawnOptions & { timeoutMs?: number },
  ): Promise<{ code: number | null; stdout: string; stderr: string; timedOut: boolean }> {
    const proc = this.cli(name, args, { ...options, wholeStdout: true });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      proc.child.kill('SIGKILL');
    }, options.timeoutMs ?? 120_000);
    const { code } = await proc.exited;
    clearTimeout(timer);
    return { code, stdout: proc.stdout(), stderr: proc.stderr(), timedOut };
  }

  /** SIGKILL and wait for the exit. */
  async kill(proc: Proc): Promise<void> {
    if (proc.alive()) proc.child.kill('SIGKILL');
    await proc.exited;
  }

  /** SIGTERM, then SIGKILL after `graceMs`; resolves with the exit. */
  async stop(proc: Proc, graceMs = 15_000): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    if (proc.alive()) proc.child.kill('SIGTERM');
    const timer = setTimeout(() => proc.child.kill('SIGKILL'), graceMs);
    const result = await proc.exited;
    clearTimeout(timer);
    return result;
  }

  /** SIGKILL every process still running (afterEach / afterAll). */
  async killAll(): Promise<void> {
    await Promise.all([...this.all].map((proc) => this.kill(proc)));
  }

  /** Processes still running. */
  running(): Proc[] {
    return [...this.all].filter((proc) => proc.alive());
  }
}

/** Resolve with the first match of `pattern` in the process's stdout (rejects if it exits first or after `timeoutMs`). */
export async function waitForOutput(proc: Proc, pattern: RegExp, timeoutMs = 60_000): Promise<RegExpExecArray> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const match = pattern.exec(proc.stdout());
    if (match) return match;
    if (!proc.alive()) throw new Error(`${proc.name} (pid ${proc.pid}) exited before printing ${pattern}; stderr: ${proc.stderr().slice(-2000)}`);
    if (Date.now() > deadline)
      throw new Error(
        `${proc.name} (pid ${proc.pid}) did not print ${pattern} within ${timeoutMs} ms; stdout: ${proc.stdout().slice(-1000)}; stderr: ${proc.stderr().slice(-2000)}`,
      );
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** CPU seconds (user + system) a running process has used so far, from /proc (Linux); -1 when unknown. */
export function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Math.round((Number(fields[11]) + Number(fields[12])) / 100);
  } catch {
    return -1;
  }
}

/** Sleep `ms`. */
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

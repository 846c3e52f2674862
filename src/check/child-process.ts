import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';

/** A command `check` runs: a shell line (the merchant's own), or an argv (its own CLI). */
export type Command = string | readonly string[];

/** Process groups of running children: killed if `check` itself is interrupted or exits early. */
const groups = new Set<number>();
let guarded = false;

function killGroups(signal: NodeJS.Signals): void {
  for (const pid of groups) {
    try {
      process.kill(-pid, signal);
    } catch {
      // Already gone.
    }
  }
}

/** A child in its own process group does not get the terminal's Ctrl-C: pass it on, then let the signal do its usual work. */
function guardGroups(): void {
  if (guarded) return;
  guarded = true;
  process.once('exit', () => killGroups('SIGKILL'));
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      killGroups('SIGTERM');
      process.kill(process.pid, signal);
    });
  }
}

function start(command: Command, options: { cwd: string; env: NodeJS.ProcessEnv }): ChildProcess {
  // Its own process group, so stopping a shell line also stops what the shell started.
  const common: SpawnOptions = { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true };
  const child = typeof command === 'string' ? spawn(command, { ...common, shell: true }) : spawn(command[0]!, command.slice(1), common);
  guardGroups();
  const pid = child.pid;
  if (pid !== undefined) {
    groups.add(pid);
    child.once('exit', () => groups.delete(pid));
  }
  return child;
}

/** The last `max` characters of what a child wrote, for error messages. */
function tail(text: string, max = 600): string {
  const trimmed = text.trim();
  return trimmed.length <= max ? trimmed : `…${trimmed.slice(-max)}`;
}

export interface RunningChild {
  /** Why it is no longer running (exit code and the tail of its output), once it exited. */
  exited(): string | undefined;
  /** SIGTERM to its process group, SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

/** Start a long-running child (the merchant's backend). */
export function startChild(command: Command, options: { cwd: string; env: NodeJS.ProcessEnv }): RunningChild {
  const child = start(command, options);
  let output = '';
  let exit: string | undefined;
  child.stdout?.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)));
  child.stderr?.on('data', (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4000)));
  const exited = new Promise<void>((resolve) => {
    child.once('error', (error) => {
      exit = `could not start: ${error.message}`;
      resolve();
    });
    child.once('exit', (code, signal) => {
      exit = `exited (${signal ?? `code ${code}`}): ${tail(output)}`;
      resolve();
    });
  });
  const signalGroup = (signal: NodeJS.Signals) => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, signal);
    } catch {
      // Already gone.
    }
  };
  return {
    exited: () => exit,
    async stop(graceMs = 5000) {
      if (exit !== undefined) return;
      signalGroup('SIGTERM');
      const timer = setTimeout(() => signalGroup('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Run a command to its end (the reconcile pass). */
export function runChild(
  command: Command,
  options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<{ code: number | null; output: string }> {
  const child = start(command, options);
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      output += `\n(stopped after ${options.timeoutMs} ms)`;
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }, options.timeoutMs);
    child.once('error', (error) => {
      clearTimeout(timer);
      resolve({ code: null, output: `could not start: ${error.message}` });
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output: tail(output, 2000) });
    });
  });
}

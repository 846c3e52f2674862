import { existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import { writeDotenvValues, type ConnectionRole, type DotenvWrite } from '../config/index.js';
import { readSandboxCredentials } from '../devtools/sandbox-credentials.js';
import { sandboxEnv } from '../devtools/sandbox-env.js';
import { CREDENTIALS_FILE, type SandboxCredentials } from '../sandbox/credentials.js';
import { DEFAULT_SANDBOX_DATA } from '../sandbox/data-dir.js';

/** A sandbox's credentials found beside the scaffold. */
export interface SandboxBeside {
  credentials: SandboxCredentials;
  /** Its credentials file, relative to the working folder. */
  file: string;
}

/** `.env` as `init` filled it from a sandbox's credentials. */
export interface EnvFromSandbox extends DotenvWrite {
  /** The credentials file it came from, relative to the working folder. */
  credentials: string;
}

/**
 * The credentials of a sandbox that ran beside the scaffold: `DIR/.sandbox/credentials.json`, else
 * `CWD/.sandbox/…`. Read before anything is written: a broken file stops init (`ConfigError`).
 */
export async function sandboxBeside(dir: string, cwd: string): Promise<SandboxBeside | undefined> {
  const sandboxDir = [join(dir, DEFAULT_SANDBOX_DATA), join(cwd, DEFAULT_SANDBOX_DATA)].find((candidate) => existsSync(join(candidate, CREDENTIALS_FILE)));
  if (sandboxDir === undefined) return undefined;
  return { credentials: await readSandboxCredentials(sandboxDir), file: relative(cwd, join(sandboxDir, CREDENTIALS_FILE)) || CREDENTIALS_FILE };
}

/**
 * The sandbox's connection lines (as its test merchant, or partner) set in `DIR/.env` (created from the scaffold's `.env.example`). A
 * variable `.env` already holds with another value is kept unless `replace` (init's `--force`).
 */
export async function envFromSandbox(dir: string, sandbox: SandboxBeside, replace: boolean, role: ConnectionRole = 'merchant'): Promise<EnvFromSandbox> {
  const written = await writeDotenvValues(join(dir, '.env'), sandboxEnv(sandbox.credentials, role), { template: join(dir, '.env.example'), replace });
  return { ...written, credentials: sandbox.file };
}

import { existsSync } from 'node:fs';
import { join, relative } from 'node:path';
import { writeDotenvValues, type DotenvWrite } from '../config/index.js';
import { readSandboxCredentials } from '../devtools/sandbox-credentials.js';
import { sandboxEnv } from '../devtools/sandbox-env.js';
import { CREDENTIALS_FILE } from '../sandbox/credentials.js';
import { DEFAULT_SANDBOX_DATA } from '../sandbox/data-dir.js';

/** `.env` as `init` filled it from a sandbox's credentials. */
export interface EnvFromSandbox extends DotenvWrite {
  /** The credentials file it came from. */
  credentials: string;
}

/**
 * When a sandbox ran beside the scaffold (`DIR/.sandbox/credentials.json`, else `CWD/.sandbox/…`):
 * its connection lines set in `DIR/.env` (created from the scaffold's `.env.example`). A variable
 * `.env` already holds with another value is kept unless `replace` (init's `--force`).
 */
export async function envFromSandbox(dir: string, cwd: string, replace: boolean): Promise<EnvFromSandbox | undefined> {
  const sandboxDir = [join(dir, DEFAULT_SANDBOX_DATA), join(cwd, DEFAULT_SANDBOX_DATA)].find((candidate) => existsSync(join(candidate, CREDENTIALS_FILE)));
  if (sandboxDir === undefined) return undefined;
  const credentials = await readSandboxCredentials(sandboxDir);
  const written = await writeDotenvValues(join(dir, '.env'), sandboxEnv(credentials), { template: join(dir, '.env.example'), replace });
  return { ...written, credentials: relative(cwd, join(sandboxDir, CREDENTIALS_FILE)) || CREDENTIALS_FILE };
}

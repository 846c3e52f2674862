import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { resolve } from 'node:path';
import { ConfigError, registerSecret } from '../errors/index.js';
import { CONNECTION_VARIABLES as NAMES } from './variables.js';

/**
 * Reading the environment: `.env` under the environment, the secrets it names, and the store. Apart
 * from `env.ts` so that commands that only open the store (`events`, `payments`, `runs`) read these
 * without loading the checks of every other variable (and zod, the schemes and money with them).
 */

/** Where `loadConfig` reads from: variables, the `.env` folder, whether to read the file. */
export interface LoadConfigOptions {
  /**
   * Variables to read. Any record of strings: Next.js types `process.env` with a required
   * `NODE_ENV`, which a test's own variables need not carry. @default process.env
   */
  env?: Readonly<Record<string, string | undefined>>;
  /** Folder whose `.env` is read (values in `env` win). @default process.cwd() */
  cwd?: string;
  /** Read `.env` from `cwd`. @default true */
  dotenv?: boolean;
}

/** A variable's value, trimmed; undefined when unset or blank. */
export type Variables = (name: string) => string | undefined;

/** The default embedded store location. */
export const DEFAULT_STORE = 'file:.checkout-kit';

/** Items of a list variable, split on spaces and commas. */
export function listOf(value: string | undefined): string[] {
  return (value ?? '')
    .split(/[\s,]+/)
    .map((item) => item.trim())
    .filter(Boolean);
}

function readDotenv(cwd: string): Record<string, string> {
  const file = resolve(cwd, '.env');
  if (!existsSync(file)) return {};
  let text: Buffer;
  try {
    text = readFileSync(file);
  } catch (error) {
    // A folder in its place is what a container's bind mount of a missing .env leaves.
    const code = (error as NodeJS.ErrnoException).code;
    const why =
      code === 'EISDIR' ? 'it is a folder, not a file' : code === 'EACCES' || code === 'EPERM' ? 'this user may not read it' : (error as Error).message;
    throw new ConfigError(`Cannot read ${file} (${why}): make it a readable file of NAME=value lines, or remove it.`, { cause: error });
  }
  // dotenv loads only when there is a file to parse: a server or a cron job configured by its environment starts without it.
  const { parse } = createRequire(import.meta.url)('dotenv') as typeof import('dotenv');
  return parse(text);
}

/** The variables of `options.env` (default `process.env`) over those of `.env` in `options.cwd`. */
export function readVariables(options: LoadConfigOptions = {}): Variables {
  const cwd = options.cwd ?? process.cwd();
  const given = options.env ?? process.env;
  const env = { ...(options.dotenv === false ? {} : readDotenv(cwd)), ...given };
  return (name) => {
    const value = env[name]?.trim();
    // Quotes around a value are part of it where nothing strips them (docker compose's `- NAME="value"`, a
    // .env line quoted twice): said here, not as a key of unknown format or a bare path (nor the value, which may be a secret).
    if (value && value.length > 1 && /^["'`]/.test(value) && value.endsWith(value[0]!)) {
      const where = name in given ? '' : ` in ${resolve(cwd, '.env')}`;
      throw new ConfigError(`${name}${where} has quotes (${value[0]}) around its value that are read as part of it: remove them.`);
    }
    // dotenv keeps a quote that is never closed as part of the value: said here, not as a malformed key or path (nor the value, which may be a secret).
    if (value && !(name in given) && /^["'`]/.test(value)) {
      throw new ConfigError(`${name} in ${resolve(cwd, '.env')} opens a quote (${value[0]}) it never closes: close it on the same line, or drop the quotes.`);
    }
    return value ? value : undefined;
  };
}

/**
 * Register every secret the configuration names for redaction, before anything can print one. The
 * console token and the alert URL are among them: an incoming-webhook URL carries its own credential.
 */
export function registerSecrets(get: Variables): void {
  for (const name of [
    NAMES.apiKey,
    NAMES.signingSecret,
    NAMES.invoiceKey,
    'CHECKOUT_PARTNER_API_KEY',
    'CHECKOUT_PARTNER_SIGNING_SECRET',
    'CHECKOUT_CONSOLE_TOKEN',
    'CHECKOUT_ALERT_URL',
    'CHECKOUT_SECRETS_KEY',
  ]) {
    registerSecret(get(name));
  }
  for (const secret of listOf(get(NAMES.webhookSecret))) registerSecret(secret);
}

/**
 * Refuse `file:~/…`: nothing expands `~` in a `.env`, a service unit or after `file:`, so the store
 * would be made in a folder named `~` under the working directory (and `rm -rf ~` would clear it).
 */
export function refuseTildeStore(url: string, setting: string): void {
  if (!/^file:~/.test(url)) return;
  throw new ConfigError(
    `${setting} "${url}" starts with ~, which nothing expands here: write the whole path, e.g. file:${homedir()}${url.slice('file:~'.length)}.`,
  );
}

/** `CHECKOUT_STORE`, checked: `file:<dir>`, `postgres://…` or `memory:`. */
export function storeOf(get: Variables): string {
  const store = get('CHECKOUT_STORE') ?? DEFAULT_STORE;
  if (!store.startsWith('file:') && !/^postgres(ql)?:\/\//.test(store) && store !== 'memory:') {
    // A folder given without its scheme (`./x`, `.checkout-kit`): say how to write it.
    if (!/^[a-z][a-z0-9+.-]*:/i.test(store))
      throw new ConfigError(`CHECKOUT_STORE "${store}" is a bare path: write file:${store} for the embedded store in that folder.`);
    throw new ConfigError(`CHECKOUT_STORE "${store}" is none of file:<dir>, postgres://… or memory: (tests only).`);
  }
  refuseTildeStore(store, 'CHECKOUT_STORE');
  return store;
}

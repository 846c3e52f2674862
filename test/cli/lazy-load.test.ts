import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open.js';
import { CLI_MAIN, TSX_LOADER } from '../support/cli.js';
import { removeTempDirs, tempDir } from '../support/temp-dirs.js';

const RECORDER = fileURLToPath(new URL('./fixtures/record-loads.mjs', import.meta.url));
const CLI_DIR = fileURLToPath(new URL('../../src/cli/', import.meta.url));
const STORE_DIR = fileURLToPath(new URL('../../src/store/', import.meta.url));
/** Packages only some commands need: the server, the drivers, the progress bars, metrics, tables, the logger and the schemas. */
const HEAVY = ['fastify', 'pg', 'better-sqlite3', 'prom-client', 'cli-progress', 'cli-table3', 'pino', 'zod', 'decimal.js', 'p-retry'];

afterEach(async () => {
  await removeTempDirs();
});

/** What a CLI process running `args` loaded: the packages of `HEAVY`, commander, and the files of src/cli. */
async function loadedBy(args: string[], options: { cwd: string; env?: NodeJS.ProcessEnv }) {
  const list = join(options.cwd, 'loaded.txt');
  const { stdout } = await promisify(execFile)(process.execPath, ['--import', TSX_LOADER, '--import', RECORDER, CLI_MAIN, ...args], {
    cwd: options.cwd,
    env: { PATH: process.env.PATH, ...options.env, RECORD_LOADS_FILE: list },
  });
  const urls = (await readFile(list, 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((line) => line.split(' ')[0]!);
  const packages = new Set(urls.map((url) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1]));
  const under = (dir: string) =>
    [
      ...new Set(urls.filter((url) => url.startsWith('file://') && fileURLToPath(url).startsWith(dir)).map((url) => fileURLToPath(url).slice(dir.length))),
    ].sort();
  return {
    stdout,
    heavy: HEAVY.filter((name) => packages.has(name)),
    commander: packages.has('commander'),
    dotenv: packages.has('dotenv'),
    builtins: new Set(urls.filter((url) => url.startsWith('node:'))),
    cli: under(CLI_DIR),
    store: under(STORE_DIR),
  };
}

describe('the CLI loads only the command it runs', () => {
  it('--version loads neither commander nor any command', async () => {
    const cwd = await tempDir('ck-lazy-');
    const loaded = await loadedBy(['--version'], { cwd });
    expect(loaded.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
    expect([loaded.commander, loaded.heavy, loaded.cli]).toEqual([false, [], ['main.ts', 'version.ts']]);
  });

  it('--help loads every definition and no action', async () => {
    const cwd = await tempDir('ck-lazy-');
    const loaded = await loadedBy(['--help'], { cwd });
    expect(loaded.stdout).toMatch(/^Usage: checkout-kit /);
    expect(loaded.heavy).toEqual([]);
    expect(loaded.cli).toContain('commands/serve.ts');
    expect(loaded.cli.filter((file) => file.startsWith('actions/'))).toEqual([]);
  });

  it('events list loads its own command and action and the store, not the server, the client, the schemas or the other commands', async () => {
    const cwd = await tempDir('ck-lazy-');
    const store = await openStore(`file:${join(cwd, 'store')}`);
    await store.close();
    const loaded = await loadedBy(['events', 'list'], { cwd, env: { CHECKOUT_STORE: 'file:store' } });
    expect(loaded.stdout).toBe('(none)\n');
    expect(loaded.cli.filter((file) => file.startsWith('actions/'))).toEqual(['actions/events.ts']);
    expect(loaded.cli.filter((file) => file.startsWith('commands/'))).toEqual(['commands/events.ts']);
    // It reads CHECKOUT_STORE alone: no zod (schemas), no decimal.js (money), no p-retry (runs).
    expect(loaded.heavy.filter((name) => name !== 'better-sqlite3')).toEqual([]);
    expect(loaded.cli).not.toContain('runtime.ts');
    expect(loaded.heavy).not.toContain('fastify');
    expect(loaded.heavy).not.toContain('pg');
    expect(loaded.heavy).not.toContain('prom-client');
    expect(loaded.heavy).not.toContain('cli-progress');
    expect(loaded.heavy).not.toContain('cli-table3');
    expect(loaded.heavy).toContain('better-sqlite3');
    // On the embedded store, nothing of the PostgreSQL backend, and no logger.
    expect(loaded.store.filter((file) => file.startsWith('postgres/'))).toEqual([]);
    expect(loaded.heavy).not.toContain('pino');
    // With no .env to read, no dotenv; and no node:crypto (the store's tokens use the global WebCrypto).
    expect(loaded.dotenv).toBe(false);
    expect(loaded.builtins.has('node:fs')).toBe(true);
    expect(loaded.builtins.has('node:crypto')).toBe(false);
  });

  it('events list beside a .env reads it with dotenv', async () => {
    const cwd = await tempDir('ck-lazy-');
    const store = await openStore(`file:${join(cwd, 'store')}`);
    await store.close();
    await writeFile(join(cwd, '.env'), 'CHECKOUT_STORE=file:store\n');
    const loaded = await loadedBy(['events', 'list'], { cwd });
    expect([loaded.stdout, loaded.dotenv]).toEqual(['(none)\n', true]);
  });
});

import pg from 'pg';
import { mkdir, readdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors/index.js';
import { silentLogger } from '../../src/log/index.js';
import { SqliteStore, MemoryStore, type Store } from '../../src/store/index.js';
import { fileStoreExists, openStore } from '../../src/store/open.js';
import { PostgresStore } from '../../src/store/postgres/index.js';
import { sampleEvent } from './fixtures/sample-event.js';
import { Scratch } from './helpers.js';

const scratch = new Scratch();
const opened: Store[] = [];
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
  await scratch.cleanUp();
});

async function open(url: string, cwd?: string): Promise<Store> {
  const store = await openStore(url, { cwd, logger: silentLogger });
  opened.push(store);
  return store;
}

describe('openStore', () => {
  it('opens file:<dir> as an embedded store in that folder, relative to cwd', async () => {
    const cwd = await scratch.dir();
    const store = await open('file:.checkout-kit', cwd);
    expect(store).toBeInstanceOf(SqliteStore);
    expect((store as SqliteStore).file).toBe(join(cwd, '.checkout-kit', 'store.sqlite'));
    expect(store.description).toContain(join(cwd, '.checkout-kit'));
    await store.insertEvent(sampleEvent('evt_1'));
    expect(await readdir(join(cwd, '.checkout-kit'))).toContain('store.sqlite');
  });

  it('opens absolute folders and file:/// URLs', async () => {
    const dir = await scratch.dir();
    expect(((await open(`file:${join(dir, 'a')}`)) as SqliteStore).file).toBe(join(dir, 'a', 'store.sqlite'));
    expect(((await open(pathToFileURL(join(dir, 'b')).href)) as SqliteStore).file).toBe(join(dir, 'b', 'store.sqlite'));
  });

  it('with mustExist, refuses a file: folder that does not exist, naming it, and creates nothing', async () => {
    const cwd = await scratch.dir();
    const error = await openStore('file:./x', { cwd, mustExist: true }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toBe(
      `No store at ${join(cwd, 'x')} (CHECKOUT_STORE=file:./x): nothing was ever stored there. Check CHECKOUT_STORE; a relative folder is read from the current directory.`,
    );
    expect(await readdir(cwd)).toEqual([]);
    expect(await fileStoreExists(join(cwd, 'x'))).toBe(false);
    // Once the store was made, it opens.
    await (await open('file:./x', cwd)).close();
    opened.pop();
    expect(await fileStoreExists(join(cwd, 'x'))).toBe(true);
    const store = await openStore('file:./x', { cwd, mustExist: true });
    opened.push(store);
    expect((store as SqliteStore).file).toBe(join(cwd, 'x', 'store.sqlite'));
  });

  it('refuses a folder holding the store an earlier checkout-kit wrote, reading or writing, and changes nothing in it', async () => {
    const cwd = await scratch.dir();
    const dir = join(cwd, '.checkout-kit');
    await mkdir(dir);
    await writeFile(join(dir, 'snapshot.json'), '{"events":[]}');
    await writeFile(join(dir, 'journal-3.jsonl'), '{"op":"insertEvent"}\n');
    for (const options of [{}, { mustExist: true }, { readonly: true }]) {
      const error = await openStore('file:.checkout-kit', { cwd, ...options }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toMatch(
        new RegExp(
          `^${dir.replaceAll('/', '\\/')} holds a store written by an earlier checkout-kit \\(journal-3\\.jsonl, snapshot\\.json\\), which this version does not read; nothing was changed\\.`,
        ),
      );
    }
    expect((await readdir(dir)).sort()).toEqual(['journal-3.jsonl', 'snapshot.json']);
    // Moved aside as the message says, the folder is a new store.
    await rename(dir, join(cwd, 'old-store'));
    expect(((await open('file:.checkout-kit', cwd)) as SqliteStore).file).toBe(join(dir, 'store.sqlite'));
  });

  it('opens memory: as a memory store', async () => {
    const store = await open('memory:');
    expect(store).toBeInstanceOf(MemoryStore);
    expect(await store.insertEvent(sampleEvent('evt_1'))).toEqual({ inserted: true });
  });

  it.each([
    ['redis://localhost', /"redis:…" is not supported: use file:<dir>/],
    ['file:', /names no folder/],
    ['.checkout-kit', /not supported/],
  ])('refuses %s with a ConfigError', async (url, message) => {
    const error = await openStore(url).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).not.toContain('pw@');
  });

  it('opens postgres:// as the PostgreSQL store; an unreachable server is a clear error without the password', async () => {
    const error = await openStore('postgres://user:secretpw@127.0.0.1:9/db').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).not.toContain('secretpw');
    if (process.env.DATABASE_URL) {
      const schema = `open_test_${process.pid}`;
      const url = new URL(process.env.DATABASE_URL);
      url.searchParams.set('schema', schema);
      const store = await openStore(url.href);
      expect(store).toBeInstanceOf(PostgresStore);
      expect(await store.insertEvent(sampleEvent('evt_pg'))).toEqual({ inserted: true });
      await store.close();
      const client = new pg.Client({ connectionString: process.env.DATABASE_URL });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
      await client.end();
    }
  });
});

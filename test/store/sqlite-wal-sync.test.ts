import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, open, readlink, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { sqliteDatabase } from '../../src/store/sqlite/sqlite-database.js';
import { TSX_LOADER } from '../support/cli.js';
import { removeTempDirs, tempDir } from '../support/temp-dirs.js';

const SCRIPT = fileURLToPath(new URL('./fixtures/wal-sync-order.mjs', import.meta.url));

afterEach(async () => {
  await removeTempDirs();
});

describe('the embedded store syncs its write-ahead log before it acknowledges a write', () => {
  it('a committed write settles only once the WAL is fdatasync’d on the thread pool, though other connections read it before', async () => {
    const dir = await tempDir('ck-wal-sync-');
    // One thread in the pool, kept busy: the sync can run only after it.
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', TSX_LOADER, SCRIPT, dir], {
      env: { ...process.env, UV_THREADPOOL_SIZE: '1' },
      timeout: 120_000,
    });
    expect(JSON.parse(stdout)).toEqual({ settledAfterPoolFree: true, readBeforeSettle: true });
  }, 150_000);
});

/** FileHandle's prototype (the class is not exported), from a handle opened in `dir`. */
async function fileHandlePrototype(dir: string): Promise<{ datasync(): Promise<void> }> {
  const probe = await open(join(dir, 'probe'), 'w');
  await probe.close();
  return Object.getPrototypeOf(probe) as { datasync(): Promise<void> };
}

describe('a failed sync of the write-ahead log', () => {
  it('refuses that commit’s writes and every later one, with one line that says to check the disk and restart', async () => {
    const dir = await tempDir('ck-wal-sync-');
    const database = sqliteDatabase({ path: join(dir, 'store.sqlite') });
    await database.query({ text: 'CREATE TABLE t (x)' });
    const prototype = await fileHandlePrototype(dir);
    const failOnce = vi.spyOn(prototype, 'datasync').mockRejectedValueOnce(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' }));
    try {
      await expect(database.query({ text: 'INSERT INTO t VALUES (1)' })).rejects.toThrow(/could not sync its write-ahead log \(EIO.*restart the process/);
      // The disk answers again, but what the failed sync left is unknown: nothing more is written.
      await expect(database.query({ text: 'INSERT INTO t VALUES (2)' })).rejects.toThrow(/could not sync its write-ahead log/);
      expect(failOnce).toHaveBeenCalledTimes(1);
      // The first insert was committed before its sync failed; the second never ran.
      expect((await database.query<{ n: number }>({ text: 'SELECT count(*) AS n FROM t' })).rows[0]?.n).toBe(1);
    } finally {
      failOnce.mockRestore();
      await database.close();
    }
  });

  it('syncs the WAL SQLite writes, named after the real file when the store’s path is a link', async () => {
    const dir = await tempDir('ck-wal-sync-');
    await mkdir(join(dir, 'real'));
    await symlink(join(dir, 'real', 'store.sqlite'), join(dir, 'store.sqlite'));
    const database = sqliteDatabase({ path: join(dir, 'store.sqlite') });
    const prototype = await fileHandlePrototype(dir);
    const synced: string[] = [];
    const spy = vi.spyOn(prototype, 'datasync');
    try {
      await database.query({ text: 'CREATE TABLE t (x)' });
      await database.query({ text: 'INSERT INTO t VALUES (1)' });
      expect(spy).toHaveBeenCalled();
      for (const handle of spy.mock.contexts as Array<{ fd: number }>) synced.push(await readlink(`/proc/self/fd/${handle.fd}`).catch(() => 'closed'));
      expect(synced.filter((path) => path !== 'closed')).toContain(join(dir, 'real', 'store.sqlite-wal'));
      expect(existsSync(join(dir, 'store.sqlite-wal'))).toBe(false);
    } finally {
      spy.mockRestore();
      await database.close();
    }
  });
});

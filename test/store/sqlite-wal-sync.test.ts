import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
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

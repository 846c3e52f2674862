import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { spawnCli } from '../support/cli.js';
import { removeTempDirs, tempDir } from '../support/temp-dirs.js';

afterEach(() => removeTempDirs());

interface Row {
  check: string;
  result: string;
  detail: string;
}

/** No SQLite driver at all, as on Node 20 where better-sqlite3 was never installed, whichever Node runs the test. */
const HIDE_SQLITE = pathToFileURL(join(import.meta.dirname, '../store/fixtures/hide-sqlite.mjs')).href;

/** `doctor --json` as a process with no SQLite driver; its exit code and store row. */
async function doctorWithoutSqlite(cwd: string): Promise<{ code: number | null; store: Row | undefined }> {
  const child = spawnCli(['doctor', '--json'], { cwd, env: { CHECKOUT_BASE_URL: 'http://127.0.0.1:9' }, preload: [HIDE_SQLITE] });
  let stdout = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { code, store: (JSON.parse(stdout) as Row[]).find((row) => row.check === 'store') };
}

describe('doctor on a Node without SQLite, before the first serve', () => {
  it('fails the store check with what to install, instead of promising that serve creates the store', async () => {
    const cwd = await tempDir('ck-doctor-no-sqlite-');
    const { code, store } = await doctorWithoutSqlite(cwd);
    expect(store).toEqual({
      check: 'store',
      result: 'fail',
      detail: expect.stringMatching(
        /^No store at .*: nothing was ever stored there\..* `checkout-kit serve` cannot create it: The embedded store needs SQLite: .*npm install better-sqlite3@12/,
      ),
    });
    expect(code).toBe(1);
    // The diagnosis creates nothing.
    expect(await readdir(cwd)).toEqual([]);
  });
});

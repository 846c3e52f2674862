import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const IMPORT_ENTRY = fileURLToPath(new URL('./fixtures/import-entry.mjs', import.meta.url));
const pkg = JSON.parse(readFileSync(`${REPO}/package.json`, 'utf8')) as { exports: Record<string, { import: { default: string } }> };
/** The framework and the driver: loaded when a plugin is registered, a sandbox starts or a store connects, never on import. */
const HEAVY = ['fastify', '@fastify/formbody', 'pg'];

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ck-entry-import-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The packages of `HEAVY` that a fresh node process loads when it imports `entry` (a file of src/). */
async function heavyPackagesLoadedBy(entry: string): Promise<string[]> {
  const list = join(dir, `${entry.replaceAll('/', '_')}.txt`);
  await promisify(execFile)(process.execPath, ['--import', 'tsx', IMPORT_ENTRY, join(REPO, entry), list], { cwd: REPO });
  const urls = (await readFile(list, 'utf8')).split('\n').filter(Boolean);
  // The recorder saw the import: the entry itself was resolved through it.
  expect(urls.some((url) => url.startsWith(`file://${join(REPO, entry)} `))).toBe(true);
  const packages = urls.map((url) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1]);
  return HEAVY.filter((name) => packages.includes(name));
}

/** `./dist/x/index.js` is built from `src/x/index.ts`. */
const sourceOf = (target: string) => target.replace(/^\.\/dist\//, 'src/').replace(/\.js$/, '.ts');

describe('what importing an entry loads, in a fresh process', () => {
  for (const [subpath, entry] of Object.entries(pkg.exports)) {
    it(`${subpath === '.' ? 'the package root' : `checkout-kit${subpath.slice(1)}`} loads neither fastify, @fastify/formbody nor pg`, async () => {
      expect(await heavyPackagesLoadedBy(sourceOf(entry.import.default))).toEqual([]);
    });
  }

  it('sees what an entry does load: the sandbox server loads fastify, and still no pg', async () => {
    expect(await heavyPackagesLoadedBy('src/sandbox/server.ts')).toEqual(['fastify']);
  });

  it("the CLI's program (every command's definition) loads none of them: each action imports what it runs, fastify (an optional peer) only to serve", async () => {
    expect(await heavyPackagesLoadedBy('src/cli/program.ts')).toEqual([]);
  });
});

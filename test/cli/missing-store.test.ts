import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { execCli, runCli } from '../support/cli.js';
import { removeTempDirs, tempDir } from '../support/temp-dirs.js';

afterEach(async () => {
  await removeTempDirs();
});

const SECRET = `whsec_${Buffer.from('0123456789abcdef0123456789abcdef').toString('base64')}`;

/** Every command that reads or acts on what is stored. */
const STORE_READERS = [
  ['events', 'list'],
  ['events', 'show', 'evt_1'],
  ['events', 'dead-letters'],
  ['payments', 'list'],
  ['payments', 'show', 'p-1'],
  ['invoices', 'list'],
  ['invoices', 'show', 'i-1'],
  ['merchants', 'list'],
  ['merchants', 'show', 't-1'],
  ['runs'],
  ['runs', '--failed'],
  ['retry', '--all'],
  ['retry', 'payment:p-1:paid'],
  ['replay', '--to', 'http://127.0.0.1:9/webhooks/checkout', '--all', '--secret', SECRET],
];

describe('commands that read the store refuse one that does not exist', () => {
  it('payments list with a mistyped CHECKOUT_STORE: one line naming the folder, exit 2, nothing created', async () => {
    const cwd = await tempDir('ck-missing-store-');
    const result = await execCli(['payments', 'list'], { cwd, env: { CHECKOUT_STORE: 'file:./x' } });
    expect(result).toEqual({
      code: 2,
      stdout: '',
      stderr: `checkout-kit: No store at ${join(cwd, 'x')} (CHECKOUT_STORE=file:./x): nothing was ever stored there. Check CHECKOUT_STORE; a relative folder is read from the current directory.\n`,
    });
    expect(await readdir(cwd)).toEqual([]);
  });

  it.each(STORE_READERS.map((args) => [args.join(' '), args]))('%s: exit 2 naming the folder, nothing created', async (_name, args) => {
    const cwd = await tempDir('ck-missing-store-');
    // The default store, never made here.
    const result = await runCli(args as string[], { cwd });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr.split('\n').filter(Boolean)).toEqual([
      expect.stringMatching(new RegExp(`^checkout-kit: No store at ${join(cwd, '.checkout-kit')} \\(CHECKOUT_STORE=file:\\.checkout-kit\\)`)),
    ]);
    expect(await readdir(cwd)).toEqual([]);
  });

  it('events list over the store an earlier checkout-kit wrote: one line saying so and what to do, exit 2, nothing created', async () => {
    const cwd = await tempDir('ck-earlier-store-');
    const dir = join(cwd, '.checkout-kit');
    await mkdir(dir);
    await writeFile(join(dir, 'snapshot.json'), '{}');
    await writeFile(join(dir, 'journal-1.jsonl'), '');
    const result = await execCli(['events', 'list'], { cwd });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    const lines = result.stderr.split('\n').filter(Boolean);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`checkout-kit: ${dir} holds a store written by an earlier checkout-kit`);
    expect(lines[0]).toContain('move the folder aside: nothing of it is carried over');
    expect((await readdir(dir)).sort()).toEqual(['journal-1.jsonl', 'snapshot.json']);
  });

  it.each(['./x', '.checkout-kit', '/var/lib/shop/store'])('a bare path as CHECKOUT_STORE (%s) is told to write file:<path>', async (path) => {
    const cwd = await tempDir('ck-bare-store-');
    const result = await execCli(['runs'], { cwd, env: { CHECKOUT_STORE: path } });
    expect(result).toEqual({
      code: 2,
      stdout: '',
      stderr: `checkout-kit: CHECKOUT_STORE "${path}" is a bare path: write file:${path} for the embedded store in that folder.\n`,
    });
    expect(await readdir(cwd)).toEqual([]);
  });
});

import { lstat, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig, setDotenvValues, writeDotenvValues } from '../../src/config/index.js';
import { removeTempDirs, tempDir } from '../support/temp-dirs.js';

afterEach(removeTempDirs);

const EXISTING = [
  '# my shop',
  'CHECKOUT_STORE=file:.checkout-kit',
  'CHECKOUT_API_KEY=svc_mk_test_old',
  '',
  '# CHECKOUT_BASE_URL=http://commented.example',
  'export CHECKOUT_BASE_URL = http://old.example',
  'PORT=3000',
  '',
].join('\n');

describe('setDotenvValues', () => {
  it('rewrites the given variables in place, appends the missing ones, and keeps every other line and comment', () => {
    const text = setDotenvValues(EXISTING, {
      CHECKOUT_BASE_URL: 'http://127.0.0.1:4010',
      CHECKOUT_API_KEY: 'svc_mk_test_new',
      CHECKOUT_WEBHOOK_SECRET: 'whsec_c2VjcmV0Kys=',
    });
    expect(text).toBe(
      [
        '# my shop',
        'CHECKOUT_STORE=file:.checkout-kit',
        'CHECKOUT_API_KEY=svc_mk_test_new',
        '',
        '# CHECKOUT_BASE_URL=http://commented.example',
        'export CHECKOUT_BASE_URL=http://127.0.0.1:4010',
        'PORT=3000',
        '',
        'CHECKOUT_WEBHOOK_SECRET=whsec_c2VjcmV0Kys=',
        '',
      ].join('\n'),
    );
  });

  it('keeps CRLF line endings, and quotes a value dotenv would not read back bare', () => {
    expect(setDotenvValues('A=1\r\nB=2\r\n', { B: 'two words # not a comment' })).toBe("A=1\r\nB='two words # not a comment'\r\n");
    expect(setDotenvValues('', { A: 'x' })).toBe('A=x\n');
  });
});

describe('writeDotenvValues', () => {
  it('updates an existing .env (mode 0600) so that loadConfig reads the new values and the others as before', async () => {
    const dir = await tempDir();
    const file = join(dir, '.env');
    await writeFile(file, EXISTING, { mode: 0o644 });
    const written = await writeDotenvValues(file, { CHECKOUT_API_KEY: 'svc_mk_test_new', CHECKOUT_STORE: 'file:.checkout-kit' });
    expect(written).toEqual({ file, created: false, set: ['CHECKOUT_API_KEY'], unchanged: ['CHECKOUT_STORE'], kept: [] });
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const config = loadConfig({ env: {}, cwd: dir });
    expect([config.apiKey, config.baseUrl, config.port]).toEqual(['svc_mk_test_new', 'http://old.example', 3000]);
  });

  it('creates a missing file from the template, and with replace: false keeps a value that differs', async () => {
    const dir = await tempDir();
    const file = join(dir, '.env');
    await writeFile(join(dir, '.env.example'), '# explained\nCHECKOUT_API_KEY=\nHOST=127.0.0.1\n');
    const created = await writeDotenvValues(file, { CHECKOUT_API_KEY: 'svc_mk_test_a' }, { template: join(dir, '.env.example') });
    expect(created).toMatchObject({ created: true, set: ['CHECKOUT_API_KEY'] });
    expect(await readFile(file, 'utf8')).toBe('# explained\nCHECKOUT_API_KEY=svc_mk_test_a\nHOST=127.0.0.1\n');
    expect((await stat(file)).mode & 0o777).toBe(0o600);

    const kept = await writeDotenvValues(file, { CHECKOUT_API_KEY: 'svc_mk_test_b', CHECKOUT_INVOICE_KEY: 'test_i' }, { replace: false });
    expect(kept).toMatchObject({ created: false, set: ['CHECKOUT_INVOICE_KEY'], kept: ['CHECKOUT_API_KEY'] });
    expect(await readFile(file, 'utf8')).toBe('# explained\nCHECKOUT_API_KEY=svc_mk_test_a\nHOST=127.0.0.1\n\nCHECKOUT_INVOICE_KEY=test_i\n');
  });

  it("with replace: false, a file it creates from the template gets the values, not the template's placeholders", async () => {
    const dir = await tempDir();
    const file = join(dir, '.env');
    await writeFile(join(dir, '.env.example'), 'CHECKOUT_BASE_URL=http://127.0.0.1:4010\nCHECKOUT_API_KEY=\n');
    const values = { CHECKOUT_BASE_URL: 'http://127.0.0.1:4711', CHECKOUT_API_KEY: 'svc_mk_test_a' };
    const created = await writeDotenvValues(file, values, { template: join(dir, '.env.example'), replace: false });
    expect(created).toEqual({ file, created: true, set: ['CHECKOUT_BASE_URL', 'CHECKOUT_API_KEY'], unchanged: [], kept: [] });
    expect(await readFile(file, 'utf8')).toBe('CHECKOUT_BASE_URL=http://127.0.0.1:4711\nCHECKOUT_API_KEY=svc_mk_test_a\n');
  });

  it('writes through a symlinked .env to the file it names', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'shared.env'), 'A=1\n');
    await symlink(join(dir, 'shared.env'), join(dir, '.env'));
    await writeDotenvValues(join(dir, '.env'), { A: '2' });
    expect(await readFile(join(dir, 'shared.env'), 'utf8')).toBe('A=2\n');
    expect((await lstat(join(dir, '.env'))).isSymbolicLink()).toBe(true);
  });
});

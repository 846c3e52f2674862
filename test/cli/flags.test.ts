import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/cli/exit.js';
import { duration, portNumber, sinceTime, wholeNumber } from '../../src/cli/flags.js';
import { execCli, runCli } from '../support/cli.js';
import { TEST_KEYS } from '../support/fixtures.js';

describe('numeric flags', () => {
  it('wholeNumber takes digits within the range, and names the flag and the range otherwise', () => {
    expect(wholeNumber('--seed')('42')).toBe(42);
    expect(wholeNumber('--seed')(' 7 ')).toBe(7);
    expect(() => wholeNumber('--seed')('4.5')).toThrow(new UsageError('--seed takes a whole number, got "4.5".'));
    expect(() => wholeNumber('--seed')('-1')).toThrow(UsageError);
    expect(() => wholeNumber('--seed')('1e3')).toThrow(UsageError);
    expect(() => wholeNumber('--seed')('')).toThrow(UsageError);
    expect(() => wholeNumber('--seed')('99999999999999999999')).toThrow(UsageError);
    const concurrency = wholeNumber('--concurrency', { min: 1, max: 256 });
    expect([concurrency('1'), concurrency('256')]).toEqual([1, 256]);
    expect(() => concurrency('0')).toThrow(new UsageError('--concurrency takes a whole number from 1 to 256, got "0".'));
    expect(() => concurrency('257')).toThrow(UsageError);
    expect(() => wholeNumber('--limit', { min: 1 })('0')).toThrow(new UsageError('--limit takes a whole number of at least 1, got "0".'));
  });

  it('portNumber takes 0 (any free port) to 65535', () => {
    expect([portNumber('--port')('0'), portNumber('--port')('65535')]).toEqual([0, 65_535]);
    expect(() => portNumber('--port')('65536')).toThrow(new UsageError('--port takes a port number (0: any free port), got "65536".'));
    expect(() => portNumber('--port')('http')).toThrow(UsageError);
  });

  it('duration reads 500ms, 30s, 10m, 2h, 1d, and a bare number in the unit the flag names', () => {
    expect(['500ms', '30s', '10m', '2h', '1d', '0'].map(duration('--older-than'))).toEqual([500, 30_000, 600_000, 7_200_000, 86_400_000, 0]);
    expect(duration('--timeout', 's')('20')).toBe(20_000);
    expect(() => duration('--timeout', 's')('soon')).toThrow(
      new UsageError('--timeout takes a duration such as 500ms, 30s, 10m or 2h (a bare number is in s), got "soon".'),
    );
  });

  it('sinceTime reads an ISO time or a duration back from the clock it is given', () => {
    const now = () => Date.parse('2030-06-01T12:00:00.000Z');
    expect(sinceTime('--since', now)('2h')).toBe('2030-06-01T10:00:00.000Z');
    expect(sinceTime('--since', now)('2025-01-31T12:00:00Z')).toBe('2025-01-31T12:00:00.000Z');
    // A bare number is a year (as Date.parse reads it), never milliseconds ago.
    expect(sinceTime('--since', now)('2025')).toBe('2025-01-01T00:00:00.000Z');
    expect(() => sinceTime('--since', now)('garbage')).toThrow(
      new UsageError('--since takes an ISO time (2025-01-31T12:00:00Z) or a duration back from now (10m, 2h, 1d), got "garbage".'),
    );
  });

  it('sinceTime takes only ISO times with a real date: what Date.parse guesses (5 as May 2001, -1, a word and a year, 30 February) is refused', () => {
    const now = () => Date.parse('2030-06-01T12:00:00.000Z');
    const since = sinceTime('--since', now);
    expect(since('2025-01-31')).toBe('2025-01-31T00:00:00.000Z');
    expect(since('2025-01-31 12:00+02:00')).toBe('2025-01-31T10:00:00.000Z');
    expect(since('2024-02-29T00:00:00.5Z')).toBe('2024-02-29T00:00:00.500Z');
    for (const value of ['5', '0', '-1', '+5', 'foo 2020', 'May 5', '1/2/3', '2020-02-30', '2023-02-29', '2025-1-5']) {
      expect(() => since(value), value).toThrow(
        new UsageError(`--since takes an ISO time (2025-01-31T12:00:00Z) or a duration back from now (10m, 2h, 1d), got "${value}".`),
      );
    }
  });

  it('an unknown LOG_LEVEL is a configuration error (exit 2) naming LOG_LEVEL and the levels', async () => {
    const cwd = await mkdtemp(join(tmpdir(), 'ck-flags-'));
    for (const args of [['reconcile'], ['sandbox', '--port', '0', '--data', join(cwd, 'sandbox')]]) {
      const result = await runCli(args, { cwd, env: { CHECKOUT_STORE: 'memory:', LOG_LEVEL: 'shouty' } });
      expect(result.code, args[0]).toBe(2);
      expect(result.stderr, args[0]).toBe('checkout-kit: The log level "shouty" (LOG_LEVEL) is not one of trace, debug, info, warn, error, fatal, silent.\n');
    }
    await rm(cwd, { recursive: true, force: true });
  });

  it('a flag value holding a line break or an escape sequence is quoted escaped: the one error line keeps what follows it', async () => {
    const cwd = await mkdtemp(join(tmpdir(), 'ck-flags-'));
    expect(await execCli(['events', 'list', '--limit', '1\n2'], { cwd })).toEqual({
      code: 2,
      stdout: '',
      stderr: 'checkout-kit: --limit takes a whole number of at least 1, got "1\\n2".\n',
    });
    expect(await execCli(['reconcile', '--older-than', '\u001b[31m5\n'], { cwd })).toEqual({
      code: 2,
      stdout: '',
      stderr: 'checkout-kit: --older-than takes a duration such as 500ms, 30s, 10m or 2h (a bare number is in ms), got "\\u001b[31m5\\n".\n',
    });
    await rm(cwd, { recursive: true, force: true });
  });

  it('LOG_LEVEL and LOG_FORMAT are read from .env as every other variable is, by the commands and by doctor', async () => {
    const cwd = await mkdtemp(join(tmpdir(), 'ck-flags-'));
    await writeFile(join(cwd, '.env'), 'LOG_LEVEL=shouty\n');
    expect(await execCli(['reconcile'], { cwd, env: { CHECKOUT_STORE: 'memory:' } })).toMatchObject({
      code: 2,
      stderr: 'checkout-kit: The log level "shouty" (LOG_LEVEL) is not one of trace, debug, info, warn, error, fatal, silent.\n',
    });
    await writeFile(join(cwd, '.env'), 'LOG_LEVEL=debug\nLOG_FORMAT=json\n');
    const doctor = await execCli(['doctor', '--json'], { cwd, env: { CHECKOUT_STORE: 'memory:' } });
    expect(JSON.parse(doctor.stdout)).toContainEqual({ check: 'log level', result: 'ok', detail: 'debug, json' });
    await rm(cwd, { recursive: true, force: true });
  });

  it('a .env that cannot be read (a folder in its place) is one line naming it, exit 2, in the commands and in doctor', async () => {
    const cwd = await mkdtemp(join(tmpdir(), 'ck-flags-'));
    await mkdir(join(cwd, '.env'));
    const message = `Cannot read ${join(cwd, '.env')} (it is a folder, not a file): make it a readable file of NAME=value lines, or remove it.`;
    for (const args of [['events', 'list'], ['reconcile']]) {
      expect(await execCli(args, { cwd }), args[0]).toEqual({ code: 2, stdout: '', stderr: `checkout-kit: ${message}\n` });
    }
    const doctor = await execCli(['doctor', '--json'], { cwd });
    expect(JSON.parse(doctor.stdout)).toContainEqual({ check: 'configuration', result: 'fail', detail: message });
    await rm(cwd, { recursive: true, force: true });
  });

  it('a quote a .env opens and never closes is one line naming the variable and the file, exit 2, without its value', async () => {
    const cwd = await mkdtemp(join(tmpdir(), 'ck-flags-'));
    const message = (name: string, quote: string) =>
      `checkout-kit: ${name} in ${join(cwd, '.env')} opens a quote (${quote}) it never closes: close it on the same line, or drop the quotes.\n`;
    // The app's own variables in the same file are not checkout-kit's to judge.
    await writeFile(join(cwd, '.env'), 'CHECKOUT_STORE="file:./data\nOTHER_APP_VALUE="kept as it is\n');
    expect(await execCli(['events', 'list'], { cwd })).toEqual({ code: 2, stdout: '', stderr: message('CHECKOUT_STORE', '"') });
    // Set in the environment, a variable is taken from there: the .env line is not read.
    expect(await execCli(['events', 'list'], { cwd, env: { CHECKOUT_STORE: 'memory:' } })).toMatchObject({ code: 0, stdout: '(none)\n' });
    await writeFile(join(cwd, '.env'), "CHECKOUT_STORE=memory:\nCHECKOUT_API_KEY='sk_test_secretvalue\n");
    expect(await execCli(['events', 'list'], { cwd })).toEqual({ code: 2, stdout: '', stderr: message('CHECKOUT_API_KEY', "'") });
    const doctor = await execCli(['doctor'], { cwd });
    expect(doctor.stdout).toContain('CHECKOUT_API_KEY in');
    expect(doctor.stdout + doctor.stderr).not.toContain('secretvalue');
    await rm(cwd, { recursive: true, force: true });
  });

  it('quotes kept around a value (set in the environment, or quoted twice in .env) are one line naming the variable, exit 2, without its value', async () => {
    const cwd = await mkdtemp(join(tmpdir(), 'ck-flags-'));
    const secret = '"whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"';
    const inEnvironment = await execCli(['reconcile'], { cwd, env: { CHECKOUT_STORE: 'memory:', CHECKOUT_WEBHOOK_SECRET: secret } });
    expect(inEnvironment).toEqual({
      code: 2,
      stdout: '',
      stderr: 'checkout-kit: CHECKOUT_WEBHOOK_SECRET has quotes (") around its value that are read as part of it: remove them.\n',
    });
    await writeFile(join(cwd, '.env'), `CHECKOUT_STORE='"file:./data"'\n`);
    expect(await execCli(['events', 'list'], { cwd })).toEqual({
      code: 2,
      stdout: '',
      stderr: `checkout-kit: CHECKOUT_STORE in ${join(cwd, '.env')} has quotes (") around its value that are read as part of it: remove them.\n`,
    });
    const doctor = await execCli(['doctor'], { cwd, env: { CHECKOUT_WEBHOOK_SECRET: secret } });
    expect(doctor.stdout).toContain('CHECKOUT_WEBHOOK_SECRET has quotes');
    expect(doctor.stdout + doctor.stderr).not.toContain('MfKQ9r8');
    await rm(cwd, { recursive: true, force: true });
  });

  it('a merchant key without its signing secret (or the reverse) stops serve and reconcile in one line, exit 2, before a store is made', async () => {
    const cwd = await mkdtemp(join(tmpdir(), 'ck-flags-'));
    await writeFile(join(cwd, 'fulfillment.mjs'), 'export default { paid: async () => {} };\n');
    const base = { CHECKOUT_BASE_URL: 'http://127.0.0.1:9', CHECKOUT_INVOICE_KEY: TEST_KEYS.invoiceKey };
    const halves = [
      [{ CHECKOUT_API_KEY: TEST_KEYS.apiKey }, 'CHECKOUT_API_KEY is set but CHECKOUT_SIGNING_SECRET is not'],
      [{ CHECKOUT_SIGNING_SECRET: TEST_KEYS.signingSecret }, 'CHECKOUT_SIGNING_SECRET is set but CHECKOUT_API_KEY is not'],
    ] as const;
    for (const [half, start] of halves) {
      for (const args of [['serve', '--port', '0'], ['reconcile']]) {
        const result = await execCli(args, { cwd, env: { ...base, ...half } });
        expect(result, args[0]).toMatchObject({ code: 2, stdout: '' });
        expect(result.stderr).toBe(
          `checkout-kit: ${start}: the service takes the merchant key only on requests signed with its secret, so every payment read and checkout would fail. Set both (or neither, for invoices alone); \`checkout-kit doctor\` checks them.\n`,
        );
      }
    }
    expect(existsSync(join(cwd, '.checkout-kit'))).toBe(false);
    // A partner platform uses no merchant key: a merchant's secret left beside the partner's keys is not half of its pair.
    const partner = await execCli(['reconcile'], {
      cwd,
      env: {
        CHECKOUT_BASE_URL: 'http://127.0.0.1:9',
        CHECKOUT_PARTNER_API_KEY: TEST_KEYS.partnerApiKey,
        CHECKOUT_PARTNER_SIGNING_SECRET: TEST_KEYS.partnerSigningSecret,
        CHECKOUT_SIGNING_SECRET: TEST_KEYS.signingSecret,
        CHECKOUT_STORE: 'memory:',
      },
    });
    expect(partner.stderr).not.toContain('is set but');
    expect(partner.code).not.toBe(2);
    await rm(cwd, { recursive: true, force: true });
  });

  it('a URL in CHECKOUT_REDIRECT_HOSTS stops serve in one line naming the host to give (every checkout would be refused), and doctor fails on it', async () => {
    const cwd = await mkdtemp(join(tmpdir(), 'ck-flags-'));
    const env = { CHECKOUT_STORE: 'memory:', CHECKOUT_REDIRECT_HOSTS: 'https://pay.example.com/checkout' };
    const message =
      'CHECKOUT_REDIRECT_HOSTS entry "https://pay.example.com/checkout" is not a host: give pay.example.com (a host such as pay.example.com, with :port when not 443).';
    expect(await execCli(['serve', '--port', '0'], { cwd, env })).toEqual({ code: 2, stdout: '', stderr: `checkout-kit: ${message}\n` });
    const doctor = await execCli(['doctor', '--json'], { cwd, env });
    expect(doctor.code).toBe(1);
    expect(JSON.parse(doctor.stdout)).toContainEqual({ check: 'configuration', result: 'fail', detail: message });
    await rm(cwd, { recursive: true, force: true });
  });

  it('a malformed numeric flag is a usage error (exit 2) before any work', async () => {
    const cwd = await mkdtemp(join(tmpdir(), 'ck-flags-'));
    for (const args of [
      ['events', 'list', '--limit', '0'],
      ['payments', 'list', '--limit', 'ten'],
      ['reconcile', '--concurrency', '300'],
      ['reconcile', '--older-than', 'later'],
      ['serve', '--port', '70000'],
      ['console', '--port', 'x'],
      ['demo', '--orders', '0'],
      ['events', 'list', '--since', 'garbage'],
      ['replay', '--to', 'http://127.0.0.1:9/webhooks/checkout', '--since', 'garbage'],
      // Durations too long to be a date or a timer.
      ['events', 'list', '--since', '99999999999999h'],
      ['replay', '--to', 'http://127.0.0.1:9/webhooks/checkout', '--since', '99999999999999h'],
      ['reconcile', '--older-than', '99999999999999h'],
      ['sandbox', '--port', '0', '--expires-in', '99999999999999h'],
      ['sandbox', '--port', '0', '--delay', '2147483648'],
      ['events', 'list', '--type', ''],
      ['replay', '--to', 'http://127.0.0.1:9/webhooks/checkout', '--type', ' '],
      ['check', '--against', 'http://127.0.0.1:9/webhooks/checkout', '--timeout', '25d'],
      ['serve', '--host', ''],
      ['console', '--host', ' '],
      ['sandbox', '--host', ''],
      ['serve', '--handlers', ''],
      ['console', '--handlers', ' '],
    ]) {
      const result = await runCli(args, { cwd, env: { CHECKOUT_STORE: 'memory:' } });
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr, args.join(' ')).toMatch(new RegExp(`^checkout-kit: ${args[args.length - 2]} takes `));
    }
    await rm(cwd, { recursive: true, force: true });
  });

  it('--version prints the version in package.json, exit 0', async () => {
    const cwd = await mkdtemp(join(tmpdir(), 'ck-flags-'));
    const { version } = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(await runCli(['--version'], { cwd })).toMatchObject({ code: 0, stdout: `${version}\n` });
    await rm(cwd, { recursive: true, force: true });
  });

  it('the bin answers --version and -V alone before loading the program, as the program answers them', async () => {
    const cwd = await mkdtemp(join(tmpdir(), 'ck-flags-'));
    const { version } = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    for (const flag of ['--version', '-V']) {
      expect(await execCli([flag], { cwd })).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
      expect(await runCli([flag], { cwd })).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
    }
    await rm(cwd, { recursive: true, force: true });
  });

  it("an empty --host names what each command accepts: the sandbox's hint offers loopback only", async () => {
    const cwd = await mkdtemp(join(tmpdir(), 'ck-flags-'));
    const hint = async (command: string) => (await runCli([command, '--host', ''], { cwd, env: { CHECKOUT_STORE: 'memory:' } })).stderr;
    expect(await hint('sandbox')).toContain('(a loopback address: 127.0.0.1 or ::1)');
    expect(await hint('sandbox')).not.toContain('0.0.0.0');
    expect(await hint('serve')).toContain('0.0.0.0 or :: for every interface');
    await rm(cwd, { recursive: true, force: true });
  });
});

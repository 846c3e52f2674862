import type { ChildProcess } from 'node:child_process';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse as parseDotenv } from 'dotenv';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/index.js';
import { errorObject } from '../../src/schemas/index.js';
import { runCli, spawnCli, waitForLine } from '../support/cli.js';
import { holdPort } from '../support/ports.js';
import { cleanup, startReceiver, tempDir, waitUntil, type Receiver } from './helpers.js';

const children: ChildProcess[] = [];
const receivers: Receiver[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  await Promise.all(receivers.splice(0).map((r) => r.close()));
  await cleanup();
});

function exited(child: ChildProcess): Promise<number | null> {
  return child.exitCode !== null ? Promise.resolve(child.exitCode) : new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

async function startCli(args: string[], dataDir?: string) {
  const dir = dataDir ?? (await tempDir());
  const child = spawnCli(['sandbox', '--port', '0', '--data', dir, ...args], { cwd: dir });
  children.push(child);
  let stdout = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  const [, url, credentialsPath] = await waitForLine(child, /sandbox listening on (http:\/\/127\.0\.0\.1:\d+)\ncredentials: (\S+)\n/);
  const creds = JSON.parse(await readFile(credentialsPath!, 'utf8'));
  return { dir, child, url: url!, credentialsPath: credentialsPath!, creds, stdout: () => stdout };
}

describe('checkout-kit sandbox', () => {
  it('starts again at once on its data after a SIGKILL, and refuses a second sandbox on data in use', async () => {
    const first = await startCli([]);
    const created = await fetch(`${first.url}/v1/invoices`, {
      method: 'POST',
      headers: { authorization: `Bearer ${first.creds.test.merchant.invoiceKey}`, 'content-type': 'application/json' },
      body: '{"amount":"3.00"}',
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };

    const second = await runCli(['sandbox', '--port', '0', '--data', first.dir], { cwd: first.dir });
    expect(second.code).toBe(2);
    expect(second.stderr.trim()).toBe(
      `checkout-kit: ${first.dir} is in use by another sandbox (lock ${join(first.dir, 'sandbox.lock')}). Stop it, or pass another --data directory.`,
    );

    first.child.kill('SIGKILL');
    await exited(first.child);
    // No stale lock to wait out: the kernel dropped it with the process.
    const again = await startCli([], first.dir);
    const read = await fetch(`${again.url}/v1/invoices/${id}`, { headers: { authorization: `Bearer ${again.creds.test.merchant.invoiceKey}` } });
    expect(read.status).toBe(200);
  });

  it('prints its URL and credentials path, serves the API and the checkout page, and stops cleanly on SIGTERM', async () => {
    const { dir, child, url, credentialsPath, creds, stdout } = await startCli([]);
    expect(credentialsPath).toBe(join(dir, 'credentials.json'));
    expect(creds.baseUrl).toBe(url);

    const created = await fetch(`${url}/v1/invoices`, {
      method: 'POST',
      headers: { authorization: `Bearer ${creds.test.merchant.invoiceKey}`, 'content-type': 'application/json' },
      body: '{"amount":"12.00"}',
    });
    expect(created.status).toBe(201);
    const invoice = (await created.json()) as { id: string; checkoutUrl: string };
    const page = await fetch(invoice.checkoutUrl);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await page.text()).toContain('<svg');

    child.kill('SIGTERM');
    expect(await exited(child)).toBe(0);
    expect(stdout()).toContain('sandbox stopped (SIGTERM)');
    const state = JSON.parse(await readFile(join(dir, 'sandbox.json'), 'utf8'));
    expect(state.invoices.map((i: { id: string }) => i.id)).toEqual([invoice.id]);
  });

  it('passes --webhook-url and the fault flags to the sender', async () => {
    const receiver = await startReceiver();
    receivers.push(receiver);
    const { child, url, creds } = await startCli(['--webhook-url', receiver.url, '--duplicate', '1', '--seed', '3', '--expires-in', '90s']);
    const created = await fetch(`${url}/v1/invoices`, {
      method: 'POST',
      headers: { authorization: `Bearer ${creds.test.merchant.invoiceKey}`, 'content-type': 'application/json' },
      body: '{"amount":"1"}',
    });
    const invoice = (await created.json()) as { expiresAt: string };
    expect(Date.parse(invoice.expiresAt) - Date.now()).toBeGreaterThan(80_000);
    expect(Date.parse(invoice.expiresAt) - Date.now()).toBeLessThanOrEqual(90_000);
    await waitUntil(() => receiver.received.length === 2, undefined, 'the duplicated delivery');
    for (const delivery of receiver.received) {
      expect((new Webhook(creds.webhookSecret).verify(delivery.body, delivery.headers) as { type: string }).type).toBe('invoice.created');
    }
    child.kill('SIGINT');
    expect(await exited(child)).toBe(0);
  });

  it('--write-env sets the five connection lines of .env (created from .env.example, later updated in place, mode 0600); --print-env prints them', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, '.env.example'), '# explained\nCHECKOUT_API_KEY=\nPORT=3000\n');
    const start = async (args: string[]) => {
      const child = spawnCli(['sandbox', '--port', '0', '--data', '.sandbox', ...args], { cwd: dir });
      children.push(child);
      let stdout = '';
      child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      // Its last start-up line: every line before it (the env line too) has been read by then.
      const [, url] = await waitForLine(child, /sandbox listening on (\S+)\n[\s\S]*press Ctrl\+C to stop\n/);
      const creds = JSON.parse(await readFile(join(dir, '.sandbox', 'credentials.json'), 'utf8'));
      return { child, url: url!, creds, stdout: () => stdout };
    };
    const expected = (url: string, creds: any) => ({
      CHECKOUT_BASE_URL: url,
      CHECKOUT_WEBHOOK_SECRET: creds.webhookSecret,
      CHECKOUT_API_KEY: creds.test.merchant.apiKey,
      CHECKOUT_SIGNING_SECRET: creds.test.merchant.signingSecret,
      CHECKOUT_INVOICE_KEY: creds.test.merchant.invoiceKey,
    });

    const first = await start(['--write-env', '--print-env']);
    const values = expected(first.url, first.creds);
    const text = await readFile(join(dir, '.env'), 'utf8');
    expect(parseDotenv(text)).toEqual({ ...values, PORT: '3000' });
    expect(text.startsWith('# explained\nCHECKOUT_API_KEY=svc_mk_test_')).toBe(true);
    expect((await stat(join(dir, '.env'))).mode & 0o777).toBe(0o600);
    expect(first.stdout().split('\n').slice(0, 5)).toEqual(Object.entries(values).map(([name, value]) => `${name}=${value}`));
    expect(first.stdout()).toContain(
      `env: created ${join(dir, '.env')} (CHECKOUT_BASE_URL, CHECKOUT_WEBHOOK_SECRET, CHECKOUT_API_KEY, CHECKOUT_SIGNING_SECRET, CHECKOUT_INVOICE_KEY)`,
    );
    first.child.kill('SIGTERM');
    expect(await exited(first.child)).toBe(0);

    // Lines of the shop's own and a key typed by hand: only the sandbox's five are set again.
    await writeFile(join(dir, '.env'), `${text.replace(/^CHECKOUT_API_KEY=.*$/m, 'CHECKOUT_API_KEY=svc_mk_test_typed')}# mine\nMY_OWN=1\n`);
    const second = await start(['--write-env']);
    const config = loadConfig({ env: {}, cwd: dir });
    expect([config.baseUrl, config.webhookSecrets, config.apiKey, config.signingSecret, config.invoiceKey]).toEqual([
      second.url,
      [second.creds.webhookSecret],
      ...Object.values(expected(second.url, second.creds)).slice(2),
    ]);
    const again = await readFile(join(dir, '.env'), 'utf8');
    expect(again).toMatch(/# mine\nMY_OWN=1\n$/);
    expect(again.startsWith('# explained\nCHECKOUT_API_KEY=svc_mk_test_')).toBe(true);
    expect(second.stdout()).toMatch(/env: updated \S+\.env \(CHECKOUT_BASE_URL, CHECKOUT_API_KEY\)/);
    expect(second.stdout()).not.toContain(second.creds.test.merchant.apiKey);
  });

  it('--write-env to a file it cannot write stops the sandbox with one line', async () => {
    const dir = await tempDir();
    const result = await runCli(['sandbox', '--port', '0', '--data', dir, '--write-env', join(dir, 'missing', '.env')], { cwd: dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      `checkout-kit: --write-env cannot write ${join(dir, 'missing', '.env')} (ENOENT): give a file in a folder that exists and that you may write to.\n`,
    );
    // Stopped: its data is free for the next start.
    const again = spawnCli(['sandbox', '--port', '0', '--data', dir], { cwd: dir });
    children.push(again);
    await waitForLine(again, /sandbox listening on/);
  });

  it('logs each refused delivery at warn (its default level): the URL, the status and what the answer said', async () => {
    const receiver = await startReceiver((n) =>
      n === 1
        ? { status: 401, body: errorObject('invalid_signature', 'No matching signature.') }
        : n === 2
          ? { status: 502, body: `<html>Bad Gateway ${'x'.repeat(300)}</html>` }
          : 204,
    );
    receivers.push(receiver);
    const { child, url, creds } = await startCli(['--webhook-url', receiver.url]);
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    await fetch(`${url}/v1/invoices`, {
      method: 'POST',
      headers: { authorization: `Bearer ${creds.test.merchant.invoiceKey}`, 'content-type': 'application/json' },
      body: '{"amount":"1"}',
    });
    await waitUntil(() => receiver.received.length === 3, undefined, 'two refusals and a delivery');
    const refusals = () =>
      stderr
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, any>)
        .filter((line) => line.msg.startsWith('webhook refused'));
    await waitUntil(() => refusals().length === 2, undefined, 'both refusals logged');
    const [first, second] = refusals();
    expect(first).toMatchObject({
      level: 40,
      url: receiver.url,
      statusCode: 401,
      code: 'invalid_signature',
      message: 'No matching signature.',
      type: 'invoice.created',
      attempt: 1,
    });
    expect(first!.msg).toBe(`webhook refused: ${receiver.url} answered 401: invalid_signature — No matching signature.`);
    expect(second).toMatchObject({ level: 40, url: receiver.url, statusCode: 502, attempt: 2 });
    expect(second!.message).toBe(`<html>Bad Gateway ${'x'.repeat(182)}…`);
    expect(second!.msg).toBe(`webhook refused: ${receiver.url} answered 502: ${second!.message}`);
  });

  it('exits 2 with one whole line on a sandbox.json that is not sandbox state, and leaves the file as it was', async () => {
    const cases: Array<[string, RegExp]> = [
      ['{"payments":5}', /\(payments: .*\)\. It was left untouched: delete it or pass another --data directory\.$/],
      ['[1,2]', /\(.*expected object.*\)\. It was left untouched/i],
      ['{"version":1,"merchants":[null]}', /\(merchants\.0: .*\)\. It was left untouched/],
      // A parser quoting a line break must not cut the line (and its advice) off.
      ['garbage\n', /is not valid sandbox state \(.*garbage\\n.*\)\. Delete it or pass another --data directory\.$/],
    ];
    for (const [content, message] of cases) {
      const dir = await tempDir();
      await writeFile(join(dir, 'sandbox.json'), content);
      const result = await runCli(['sandbox', '--port', '0', '--data', dir], { cwd: dir });
      expect(result.code).toBe(2);
      const lines = result.stderr.trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(join(dir, 'sandbox.json'));
      expect(lines[0]).toMatch(message);
      expect(await readFile(join(dir, 'sandbox.json'), 'utf8')).toBe(content);
    }
  });

  it('exits 2 with one line when --data is a file', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, 'file'), 'mine');
    const result = await runCli(['sandbox', '--port', '0', '--data', join(dir, 'file')], { cwd: dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(`checkout-kit: ${join(dir, 'file')} (or a folder above it) is a file, not a folder: pass a folder as --data.\n`);
    expect(await readFile(join(dir, 'file'), 'utf8')).toBe('mine');
  });

  it('says a taken port in one line, and leaves its data free for the next start', async () => {
    const dir = await tempDir();
    const taken = await holdPort();
    const { port } = taken;
    try {
      const result = await runCli(['sandbox', '--port', String(port), '--data', dir], { cwd: dir });
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        `checkout-kit: 127.0.0.1:${port} is already in use by another process: stop it, or choose another port (the port option; on the command line --port or PORT).\n`,
      );
    } finally {
      await taken.release();
    }
    const child = spawnCli(['sandbox', '--port', '0', '--data', dir], { cwd: dir });
    children.push(child);
    await waitForLine(child, /sandbox listening on/);
  });

  it('exits 2 on a bad flag value, without starting', async () => {
    const dir = await tempDir();
    const result = await runCli(['sandbox', '--drop', '1.5', '--data', dir], { cwd: dir });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--drop takes a probability between 0 and 1/);
    const badHost = await runCli(['sandbox', '--host', '0.0.0.0', '--port', '0', '--data', dir], { cwd: dir });
    expect(badHost.code).toBe(2);
    expect(badHost.stderr).toMatch(/loopback/);
  });
});

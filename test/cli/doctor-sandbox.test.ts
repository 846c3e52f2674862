import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { runCli } from '../support/cli.js';
import { removeTempDirs, tempDir } from '../support/temp-dirs.js';

interface Row {
  check: string;
  result: string;
  detail: string;
}

let dir: string;
let sandbox: SandboxHandle;
beforeEach(async () => {
  dir = await tempDir('ck-doctor-sandbox-');
  sandbox = await startSandbox({ dataDir: join(dir, '.sandbox'), port: 0 });
});
afterEach(async () => {
  await sandbox.close();
  await removeTempDirs();
});

/** `.env` as the shop's, with the sandbox's test merchant, then `changes` (undefined leaves a line out). */
async function writeEnv(changes: Record<string, string | undefined> = {}): Promise<void> {
  const { merchant } = sandbox.credentials.test;
  const values: Record<string, string | undefined> = {
    CHECKOUT_BASE_URL: sandbox.url,
    CHECKOUT_WEBHOOK_SECRET: sandbox.credentials.webhookSecret,
    CHECKOUT_API_KEY: merchant.apiKey,
    CHECKOUT_SIGNING_SECRET: merchant.signingSecret,
    CHECKOUT_INVOICE_KEY: merchant.invoiceKey,
    CHECKOUT_STORE: 'memory:',
    ...changes,
  };
  await writeFile(
    join(dir, '.env'),
    Object.entries(values)
      .flatMap(([name, value]) => (value === undefined ? [] : [`${name}=${value}\n`]))
      .join(''),
  );
}

async function doctor(env: NodeJS.ProcessEnv = {}) {
  const result = await runCli(['doctor', '--json'], { cwd: dir, env });
  const rows = JSON.parse(result.stdout) as Row[];
  return { code: result.code, stdout: result.stdout, rows, row: rows.find((row) => row.check === 'sandbox credentials') };
}

/** `.env` as `sandbox --write-env --partner` leaves it: the partner's key and secret, no merchant key. */
async function writePartnerEnv(changes: Record<string, string> = {}): Promise<void> {
  const { partner } = sandbox.credentials.test;
  await writeEnv({
    CHECKOUT_API_KEY: '',
    CHECKOUT_SIGNING_SECRET: '',
    CHECKOUT_INVOICE_KEY: '',
    CHECKOUT_PARTNER_API_KEY: partner.apiKey,
    CHECKOUT_PARTNER_SIGNING_SECRET: partner.signingSecret,
    ...changes,
  });
}

describe('doctor beside a sandbox', () => {
  it('says the connection variables match .sandbox/credentials.json', async () => {
    await writeEnv();
    const { row } = await doctor();
    expect(row).toEqual({
      check: 'sandbox credentials',
      result: 'ok',
      detail: 'CHECKOUT_BASE_URL, CHECKOUT_WEBHOOK_SECRET, CHECKOUT_API_KEY, CHECKOUT_SIGNING_SECRET, CHECKOUT_INVOICE_KEY match .sandbox/credentials.json',
    });
  });

  it('names each variable that differs or is missing, without its value, with the command that sets them; exit 1', async () => {
    const typed = 'svc_mk_test_typed-by-hand';
    const otherSecret = 'whsec_b3RoZXItc2VjcmV0LW5vdC10aGUtc2FuZGJveA==';
    // The base URL names the same sandbox another way; the webhook secret comes from the real environment.
    const otherUrl = sandbox.url.replace('127.0.0.1', 'localhost');
    await writeEnv({ CHECKOUT_API_KEY: typed, CHECKOUT_INVOICE_KEY: undefined, CHECKOUT_BASE_URL: otherUrl });
    const { code, stdout, row } = await doctor({ CHECKOUT_WEBHOOK_SECRET: otherSecret });
    expect(code).toBe(1);
    expect(row).toEqual({
      check: 'sandbox credentials',
      result: 'fail',
      detail:
        `CHECKOUT_BASE_URL is ${otherUrl}, the sandbox's is ${sandbox.url}; ` +
        'CHECKOUT_WEBHOOK_SECRET differs (set in the environment, which wins over .env: unset it); CHECKOUT_API_KEY differs; CHECKOUT_INVOICE_KEY is not set ' +
        '(compared with .sandbox/credentials.json): to use the sandbox, restart it with --write-env (`checkout-kit sandbox --write-env`), which sets them in .env',
    });
    const { merchant } = sandbox.credentials.test;
    for (const secret of [typed, otherSecret, merchant.apiKey, merchant.invoiceKey, merchant.signingSecret, sandbox.credentials.webhookSecret])
      expect(stdout).not.toContain(secret);
  });

  it('only warns when the configuration has live keys (it is meant to differ), and has no row without a sandbox', async () => {
    const { merchant } = sandbox.credentials.live;
    await writeEnv({ CHECKOUT_API_KEY: merchant.apiKey, CHECKOUT_SIGNING_SECRET: merchant.signingSecret, CHECKOUT_INVOICE_KEY: merchant.invoiceKey });
    const live = await doctor();
    expect(live.row).toMatchObject({
      result: 'warn',
      detail: expect.stringMatching(/^CHECKOUT_API_KEY differs; CHECKOUT_SIGNING_SECRET differs; CHECKOUT_INVOICE_KEY differs \(compared with/),
    });

    const elsewhere = await tempDir('ck-doctor-no-sandbox-');
    const result = await runCli(['doctor', '--json'], { cwd: elsewhere, env: { CHECKOUT_BASE_URL: 'http://127.0.0.1:9' } });
    expect((JSON.parse(result.stdout) as Row[]).map((row) => row.check)).not.toContain('sandbox credentials');
  });
});

describe("doctor's probe of the merchant key", () => {
  const keyRow = async (env: NodeJS.ProcessEnv) => {
    const result = await runCli(['doctor', '--json'], { cwd: dir, env });
    return (JSON.parse(result.stdout) as Row[]).find((row) => row.check === 'merchant key');
  };

  it("takes the service's own 404 for a payment that cannot exist as the key accepted", async () => {
    await writeEnv();
    expect(await keyRow({})).toEqual({ check: 'merchant key', result: 'ok', detail: 'accepted (probe answered 404)' });
  });

  it('fails on an HTML 404 from another server (a wrong CHECKOUT_BASE_URL), saying what to check', async () => {
    const other = createServer((_request, response) => response.writeHead(404, { 'content-type': 'text/html' }).end('<html><body>Not Found</body></html>'));
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    try {
      await writeEnv({ CHECKOUT_BASE_URL: `http://127.0.0.1:${(other.address() as AddressInfo).port}/wrong-prefix` });
      expect(await keyRow({})).toEqual({
        check: 'merchant key',
        result: 'fail',
        detail: expect.stringMatching(/404 \(Not Found\) without the spec's error object: another server may have answered \(check CHECKOUT_BASE_URL\)/),
      });
    } finally {
      await new Promise((resolve) => other.close(resolve));
    }
  });
});

describe('doctor on a partner platform', () => {
  it("checks the partner's keys, not a merchant's, and has the service accept them: exit 0", async () => {
    await writePartnerEnv();
    const { code, rows } = await doctor();
    expect(rows.filter((row) => row.result !== 'ok' && row.check !== 'fulfillment module')).toEqual([]);
    expect(rows.map((row) => row.check)).not.toContain('merchant credentials');
    expect(rows.find((row) => row.check === 'partner credentials')).toEqual({
      check: 'partner credentials',
      result: 'ok',
      detail: 'CHECKOUT_PARTNER_API_KEY and CHECKOUT_PARTNER_SIGNING_SECRET set',
    });
    expect(rows.find((row) => row.check === 'partner key')).toEqual({ check: 'partner key', result: 'ok', detail: 'accepted (probe answered 404)' });
    expect(code).toBe(0);
  });

  it('fails when the service refuses the partner key, naming the refusal', async () => {
    await writePartnerEnv({ CHECKOUT_PARTNER_SIGNING_SECRET: 'svc_ps_typed-by-hand-not-the-sandboxs' });
    const { code, rows } = await doctor();
    expect(rows.find((row) => row.check === 'partner key')).toEqual({ check: 'partner key', result: 'fail', detail: expect.stringContaining('401') });
    expect(code).toBe(1);
  });
});

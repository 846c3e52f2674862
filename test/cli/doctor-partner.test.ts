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
  dir = await tempDir('ck-doctor-partner-');
  sandbox = await startSandbox({ dataDir: join(dir, '.sandbox'), port: 0 });
});
afterEach(async () => {
  await sandbox.close();
  await removeTempDirs();
});

/** `.env` as `sandbox --write-env --partner` leaves it: the partner's key and secret, no merchant key. */
async function writePartnerEnv(changes: Record<string, string> = {}): Promise<void> {
  const { partner } = sandbox.credentials.test;
  const values: Record<string, string> = {
    CHECKOUT_BASE_URL: sandbox.url,
    CHECKOUT_WEBHOOK_SECRET: sandbox.credentials.webhookSecret,
    CHECKOUT_API_KEY: '',
    CHECKOUT_SIGNING_SECRET: '',
    CHECKOUT_INVOICE_KEY: '',
    CHECKOUT_PARTNER_API_KEY: partner.apiKey,
    CHECKOUT_PARTNER_SIGNING_SECRET: partner.signingSecret,
    CHECKOUT_STORE: 'memory:',
    ...changes,
  };
  await writeFile(
    join(dir, '.env'),
    Object.entries(values)
      .map(([name, value]) => `${name}=${value}\n`)
      .join(''),
  );
}

async function doctor() {
  const result = await runCli(['doctor', '--json'], { cwd: dir });
  return { code: result.code, rows: JSON.parse(result.stdout) as Row[] };
}

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

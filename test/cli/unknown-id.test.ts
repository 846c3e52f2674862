import { afterEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open.js';
import { execCli, runCli } from '../support/cli.js';
import { removeTempDirs, tempDir } from '../support/temp-dirs.js';

afterEach(async () => {
  await removeTempDirs();
});

const SECRET = `whsec_${Buffer.from('0123456789abcdef0123456789abcdef').toString('base64')}`;

/** A store that exists and holds nothing the commands below name. */
async function emptyStore(): Promise<string> {
  const cwd = await tempDir('ck-unknown-id-');
  await (await openStore('file:.checkout-kit', { cwd })).close();
  return cwd;
}

describe('an id the user names that the store does not hold is a usage error in every command', () => {
  it('events show: one line, exit 2', async () => {
    const cwd = await emptyStore();
    expect(await execCli(['events', 'show', 'evt_nope'], { cwd })).toEqual({
      code: 2,
      stdout: '',
      stderr: 'checkout-kit: No event evt_nope in the store: see `checkout-kit events list`.\n',
    });
  });

  it("payments show on a partner platform, given a tenant's bare order id: says orders are kept as <tenant>/<order>", async () => {
    const cwd = await tempDir('ck-unknown-id-partner-');
    const store = await openStore('file:.checkout-kit', { cwd });
    await store.putTenantMerchant({
      tenantId: 'shop-42',
      environment: 'test',
      idempotencyKey: 'k42',
      requestHash: 'h42',
      name: 'Shop 42',
      email: 'o@shop42.test',
    });
    await store.close();
    expect(await execCli(['payments', 'show', '1001'], { cwd })).toEqual({
      code: 2,
      stdout: '',
      stderr:
        'checkout-kit: No payment 1001 in the store: see `checkout-kit payments list` (show also takes an order id, e-mail or event id; ' +
        "a tenant's order is <tenant>/<order>, e.g. shop-42/1001).\n",
    });
    // An id already naming a tenant's order, and a merchant's shop (no tenants), get no such hint.
    expect((await execCli(['payments', 'show', 'shop-9/1001'], { cwd })).stderr).not.toContain('<tenant>/<order>');
    expect((await execCli(['payments', 'show', '1001'], { cwd: await emptyStore() })).stderr).toBe(
      'checkout-kit: No payment 1001 in the store: see `checkout-kit payments list` (show also takes an order id, e-mail or event id).\n',
    );
  });

  it('an id holding an escape sequence is printed escaped: nothing reaches the terminal raw', async () => {
    const cwd = await emptyStore();
    expect(await execCli(['events', 'show', 'x\u001b[31mred'], { cwd })).toEqual({
      code: 2,
      stdout: '',
      stderr: 'checkout-kit: No event x\\u001b[31mred in the store: see `checkout-kit events list`.\n',
    });
  });

  it("an id holding a line break or an escape sequence keeps the whole line, escaped: in the error and in replay's line", async () => {
    const cwd = await emptyStore();
    expect(await execCli(['retry', 'payment:p\nnope:paid'], { cwd })).toEqual({
      code: 2,
      stdout: '',
      stderr: 'checkout-kit: No run payment:p\\nnope:paid in the store: see `checkout-kit runs --failed` for the keys of failed runs.\n',
    });
    expect(await execCli(['replay', '--to', 'http://127.0.0.1:9/webhooks/checkout', '--event', 'evt_\u001b[31m\nred', '--secret', SECRET], { cwd })).toEqual({
      code: 2,
      stdout: '',
      stderr: 'checkout-kit: No event evt_\\u001b[31m\\nred in the store: see `checkout-kit events list`.\n',
    });
  });

  it.each([
    [['payments', 'show', 'p-nope'], 'No payment p-nope in the store: see `checkout-kit payments list` (show also takes an order id, e-mail or event id).'],
    [['invoices', 'show', 'i-nope'], 'No invoice i-nope in the store: see `checkout-kit invoices list` (show also takes an order id, e-mail or event id).'],
    [['retry', 'payment:p-nope:paid'], 'No run payment:p-nope:paid in the store: see `checkout-kit runs --failed` for the keys of failed runs.'],
    [
      ['replay', '--to', 'http://127.0.0.1:9/webhooks/checkout', '--event', 'evt_nope', '--secret', SECRET],
      'No event evt_nope in the store: see `checkout-kit events list`.',
    ],
  ])('%j: one line, exit 2', async (args, message) => {
    const cwd = await emptyStore();
    const result = await runCli(args, { cwd });
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(`checkout-kit: ${message}\n`);
    expect(result.stdout).toBe('');
  });
});

import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/errors/index.js';
import { startSandbox } from '../../src/sandbox/index.js';
import { api, cleanup, readCredentials, simulate, tempDir } from './helpers.js';

afterEach(cleanup);

describe('persistence in --data', () => {
  it('keeps credentials, records, idempotency keys and events across a restart', async () => {
    const dataDir = await tempDir();
    const first = await startSandbox({ dataDir });
    const creds = await readCredentials(first);
    const merchant = { key: creds.test.merchant.apiKey, secret: creds.test.merchant.signingSecret };
    const payment = await api(first, 'POST', '/v1/payments', { ...merchant, body: { amount: '9.99' }, idempotencyKey: 'persist-1' });
    await simulate(first, `/sandbox/payments/${payment.body.id}/deposit`, { amount: '4' });
    const invoice = await api(first, 'POST', '/v1/invoices', { key: creds.test.merchant.invoiceKey, body: { amount: '3' } });
    const eventIds = first.events().map((e) => e.id);
    await first.close();

    const second = await startSandbox({ dataDir });
    try {
      const again = await readCredentials(second);
      expect({ ...again, baseUrl: '' }).toEqual({ ...creds, baseUrl: '' });
      expect(again.baseUrl).toBe(second.url);
      const read = await api(second, 'GET', `/v1/payments/${payment.body.id}`, merchant);
      expect(read.status).toBe(200);
      expect(read.body).toMatchObject({
        status: 'PARTIALLY_PAID',
        amountReceived: '4.00',
        remaining: '5.99',
        checkoutUrl: `${second.url}/checkout/${payment.body.id}`,
      });
      const replay = await api(second, 'POST', '/v1/payments', { ...merchant, body: { amount: '9.99' }, idempotencyKey: 'persist-1' });
      expect(replay.status).toBe(200);
      expect(replay.body.id).toBe(payment.body.id);
      expect((await api(second, 'GET', `/v1/invoices/${invoice.body.id}`, { key: creds.test.merchant.invoiceKey })).status).toBe(200);
      expect(second.events().map((e) => e.id)).toEqual(eventIds);
    } finally {
      await second.close();
    }
  });

  it('writes the state as a plain JSON file, and refuses a second sandbox on the same directory', async () => {
    const dataDir = await tempDir();
    const sandbox = await startSandbox({ dataDir });
    try {
      const state = JSON.parse(await readFile(join(dataDir, 'sandbox.json'), 'utf8'));
      expect(state.partners).toHaveLength(2);
      await expect(startSandbox({ dataDir })).rejects.toBeInstanceOf(ConfigError);
    } finally {
      await sandbox.close();
    }
    // Released on close: it opens again.
    await (await startSandbox({ dataDir })).close();
  });
});

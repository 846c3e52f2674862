import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { SandboxCredentials, SandboxHandle } from '../../src/sandbox/index.js';
import { api, cleanup, openSandbox, readCredentials, readState } from './helpers.js';

afterEach(cleanup);

async function setup(createDelayMs = 0): Promise<{ sandbox: SandboxHandle; creds: SandboxCredentials }> {
  const sandbox = await openSandbox({ createDelayMs });
  return { sandbox, creds: await readCredentials(sandbox) };
}

const createPayment = (sandbox: SandboxHandle, creds: SandboxCredentials, body: unknown, idempotencyKey: string) =>
  api(sandbox, 'POST', '/v1/payments', { key: creds.test.merchant.apiKey, secret: creds.test.merchant.signingSecret, body, idempotencyKey });

describe('Idempotency-Key', () => {
  it('same key and same body: the same record with 200, stored once', async () => {
    const { sandbox, creds } = await setup();
    const first = await createPayment(sandbox, creds, { amount: '10', referenceId: 'o-1' }, 'key-1');
    // Same body with keys in another order counts as the same body.
    const again = await createPayment(sandbox, creds, { referenceId: 'o-1', amount: '10' }, 'key-1');
    expect([first.status, again.status]).toEqual([201, 200]);
    expect(again.body.id).toBe(first.body.id);
    expect((await readState(sandbox)).payments).toHaveLength(1);
    expect(sandbox.events().filter((e) => e.type === 'payment.created')).toHaveLength(1);
  });

  it('same key, different body: 422 idempotency_key_reused and nothing stored', async () => {
    const { sandbox, creds } = await setup();
    expect((await createPayment(sandbox, creds, { amount: '10' }, 'key-2')).status).toBe(201);
    const reused = await createPayment(sandbox, creds, { amount: '11' }, 'key-2');
    expect(reused.status).toBe(422);
    expect(reused.body.error.code).toBe('idempotency_key_reused');
    expect((await readState(sandbox)).payments).toHaveLength(1);
  });

  it('concurrent requests with one key: one 201, the others 409 or a 200 replay, one record', async () => {
    const { sandbox, creds } = await setup();
    const results = await Promise.all(Array.from({ length: 12 }, () => createPayment(sandbox, creds, { amount: '5' }, 'key-3')));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.every((s) => s === 201 || s === 200 || s === 409)).toBe(true);
    const id = results.find((r) => r.status === 201)!.body.id;
    for (const r of results.filter((r) => r.status === 200)) expect(r.body.id).toBe(id);
    for (const r of results.filter((r) => r.status === 409)) expect(r.body.error.code).toBe('idempotency_key_in_flight');
    expect((await readState(sandbox)).payments).toHaveLength(1);
  });

  it('while the first request is in flight the others get 409; afterwards the key replays', async () => {
    const { sandbox, creds } = await setup(300);
    const results = await Promise.all(Array.from({ length: 5 }, () => createPayment(sandbox, creds, { amount: '5' }, 'key-4')));
    expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409]);
    const later = await createPayment(sandbox, creds, { amount: '5' }, 'key-4');
    expect(later.status).toBe(200);
    expect(later.body.id).toBe(results.find((r) => r.status === 201)!.body.id);
    expect((await readState(sandbox)).payments).toHaveLength(1);
  });

  it('a failed create does not use up the key', async () => {
    const { sandbox, creds } = await setup();
    expect((await createPayment(sandbox, creds, { amount: '5', token: 'DAI' }, 'key-5')).status).toBe(422);
    expect((await createPayment(sandbox, creds, { amount: '5' }, 'key-5')).status).toBe(201);
  });

  it('keys are scoped per caller and operation', async () => {
    const { sandbox, creds } = await setup();
    const key = randomUUID();
    expect((await createPayment(sandbox, creds, { amount: '5' }, key)).status).toBe(201);
    const invoice = await api(sandbox, 'POST', '/v1/invoices', { key: creds.test.merchant.invoiceKey, body: { amount: '5' }, idempotencyKey: key });
    expect(invoice.status).toBe(201);
    const live = await api(sandbox, 'POST', '/v1/payments', {
      key: creds.live.merchant.apiKey,
      secret: creds.live.merchant.signingSecret,
      body: { amount: '5' },
      idempotencyKey: key,
    });
    expect(live.status).toBe(201);
  });

  it('partner create payment compares merchantId too', async () => {
    const { sandbox, creds } = await setup();
    const partner = { key: creds.test.partner.apiKey, secret: creds.test.partner.signingSecret, idempotencyKey: 'p-key' };
    const merchant = await api(sandbox, 'POST', '/v1/partner/merchants', {
      ...partner,
      idempotencyKey: 'm-key',
      body: { externalTenantId: 't', email: 'e@example.com', name: 'n' },
    });
    expect(merchant.status).toBe(201);
    const first = await api(sandbox, 'POST', '/v1/partner/payments', { ...partner, body: { merchantId: merchant.body.merchantId, amount: '5' } });
    expect(first.status).toBe(201);
    const other = await api(sandbox, 'POST', '/v1/partner/payments', { ...partner, body: { merchantId: creds.test.merchant.merchantId, amount: '5' } });
    expect(other.status).toBe(422);
    const replay = await api(sandbox, 'POST', '/v1/partner/merchants', {
      ...partner,
      idempotencyKey: 'm-key',
      body: { externalTenantId: 't', email: 'e@example.com', name: 'n' },
    });
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual(merchant.body);
  });
});

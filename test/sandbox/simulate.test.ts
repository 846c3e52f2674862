import { afterEach, describe, expect, it } from 'vitest';
import type { SandboxCredentials, SandboxHandle, SandboxOptions } from '../../src/sandbox/index.js';
import { api, cleanup, openSandbox, readCredentials, simulate, waitUntil } from './helpers.js';

afterEach(cleanup);

async function setup(options: SandboxOptions = {}) {
  const sandbox = await openSandbox(options);
  const creds = await readCredentials(sandbox);
  return { sandbox, creds, ...callers(sandbox, creds) };
}

function callers(sandbox: SandboxHandle, creds: SandboxCredentials) {
  const merchant = { key: creds.test.merchant.apiKey, secret: creds.test.merchant.signingSecret };
  const invoiceKey = { key: creds.test.merchant.invoiceKey };
  return {
    createPayment: async (body: Record<string, unknown>) => (await api(sandbox, 'POST', '/v1/payments', { ...merchant, body })).body,
    getPayment: async (id: string) => (await api(sandbox, 'GET', `/v1/payments/${id}`, merchant)).body,
    createInvoice: async (body: Record<string, unknown>) => (await api(sandbox, 'POST', '/v1/invoices', { ...invoiceKey, body })).body,
    getInvoice: async (id: string) => (await api(sandbox, 'GET', `/v1/invoices/${id}`, invoiceKey)).body,
    listInvoices: async () => (await api(sandbox, 'GET', '/v1/invoices', invoiceKey)).body as Array<{ id: string }>,
  };
}

const types = (sandbox: SandboxHandle) => sandbox.events().map((e) => e.type);

describe('payment deposits', () => {
  it('partial, full and excess deposits move the status and amounts exactly', async () => {
    const { sandbox, createPayment, getPayment } = await setup();
    const p = await createPayment({ amount: '0.3' });
    const half = await simulate(sandbox, `/sandbox/payments/${p.id}/deposit`, { amount: '0.1' });
    expect(half.status).toBe(200);
    expect(half.body).toMatchObject({ status: 'PARTIALLY_PAID', amountReceived: '0.1', remaining: '0.2', surplus: '0.0' });
    // 0.1 + 0.2 is exactly 0.3 here: decimal arithmetic, not floating point.
    expect((await simulate(sandbox, `/sandbox/payments/${p.id}/deposit`, { amount: '0.2' })).body).toMatchObject({
      status: 'PAID',
      amountReceived: '0.3',
      remaining: '0.0',
    });
    expect(await getPayment(p.id)).toMatchObject({ status: 'PAID' });
    expect((await simulate(sandbox, `/sandbox/payments/${p.id}/deposit`, { amount: '0.000000000000000001' })).body).toMatchObject({
      status: 'OVERPAID',
      amountReceived: '0.300000000000000001',
      surplus: '0.000000000000000001',
    });
    expect(types(sandbox)).toEqual(['payment.created', 'payment.partially_paid', 'payment.paid', 'payment.overpaid']);
  });

  it('deposits go to an offered network and token; others are 422; bad bodies 400', async () => {
    const { sandbox, createPayment } = await setup();
    const p = await createPayment({ amount: '5', networkId: 3448148188 });
    const path = `/sandbox/payments/${p.id}/deposit`;
    expect((await simulate(sandbox, path, { amount: '1', networkId: 11155111 })).body.error.code).toBe('network_not_available');
    expect((await simulate(sandbox, path, { amount: '1', token: 'USDC' })).body.error.code).toBe('token_not_available');
    for (const body of [{ amount: '0' }, { amount: 1 }, {}, { amount: '1', extra: true }]) {
      const res = await simulate(sandbox, path, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error.code).toBe('invalid_request');
    }
    expect((await simulate(sandbox, path, { amount: '1', networkId: 3448148188, token: 'USDT' })).status).toBe(200);
  });
});

describe('expiry and late money', () => {
  it('expire: CREATED becomes EXPIRED with one event; a late deposit still counts and makes it PAID', async () => {
    const { sandbox, createInvoice, getInvoice } = await setup();
    const inv = await createInvoice({ amount: '20' });
    const expired = await simulate(sandbox, `/sandbox/invoices/${inv.id}/expire`);
    expect(expired.body.status).toBe('EXPIRED');
    expect(Date.parse(expired.body.expiresAt)).toBeLessThanOrEqual(Date.now());
    expect((await simulate(sandbox, `/sandbox/invoices/${inv.id}/expire`)).status).toBe(200);
    expect(types(sandbox)).toEqual(['invoice.created', 'invoice.expired']);

    await simulate(sandbox, `/sandbox/invoices/${inv.id}/deposit`, { amount: '20' });
    const detail = await getInvoice(inv.id);
    expect(detail).toMatchObject({ status: 'PAID', amountReceived: '20' });
    expect(detail.payments).toEqual([expect.objectContaining({ amount: '20', late: true })]);
    expect(detail.settlements).toEqual([expect.objectContaining({ amount: '20' })]);
    expect(types(sandbox)).toEqual(['invoice.created', 'invoice.expired', 'invoice.paid']);
    expect((await simulate(sandbox, `/sandbox/invoices/${inv.id}/expire`)).status).toBe(409);
  });

  it('a partly paid resource keeps PARTIALLY_PAID at expiry but gets the expired event', async () => {
    const { sandbox, createPayment, getPayment } = await setup();
    const p = await createPayment({ amount: '10' });
    await simulate(sandbox, `/sandbox/payments/${p.id}/deposit`, { amount: '3' });
    await simulate(sandbox, `/sandbox/payments/${p.id}/expire`);
    expect(await getPayment(p.id)).toMatchObject({ status: 'PARTIALLY_PAID', amountReceived: '3', remaining: '7' });
    expect(types(sandbox)).toEqual(['payment.created', 'payment.partially_paid', 'payment.expired']);
  });

  it('resources expire on their own at expiresAt (configurable lifetime)', async () => {
    const { sandbox, createPayment, getPayment } = await setup({ expiresAfterMs: 300, expiryCheckMs: 50 });
    const p = await createPayment({ amount: '10' });
    expect(Date.parse(p.expiresAt) - Date.parse(p.createdAt)).toBe(300);
    await waitUntil(() => types(sandbox).includes('payment.expired'), undefined, 'the expired event');
    expect(await getPayment(p.id)).toMatchObject({ status: 'EXPIRED' });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(types(sandbox).filter((t) => t === 'payment.expired')).toHaveLength(1);
  });

  it('the default lifetime is 30 minutes', async () => {
    const { createPayment } = await setup();
    const p = await createPayment({ amount: '1' });
    expect(Date.parse(p.expiresAt) - Date.parse(p.createdAt)).toBe(30 * 60_000);
  });
});

describe('invoices', () => {
  it('each deposit is a payment entry; settlements add up to what was received once fully paid', async () => {
    const { sandbox, createInvoice, getInvoice } = await setup();
    const inv = await createInvoice({ amount: '30.00' });
    await simulate(sandbox, `/sandbox/invoices/${inv.id}/deposit`, { amount: '10', networkId: 3448148188 });
    let detail = await getInvoice(inv.id);
    expect(detail).toMatchObject({ status: 'PARTIALLY_PAID', amountReceived: '10.00' });
    expect(detail.payments[0]).toMatchObject({
      networkId: 3448148188,
      token: 'USDT',
      address: inv.addresses.find((a: { networkId: number }) => a.networkId === 3448148188).depositAddress,
    });
    expect(detail.payments[0].txHash).toMatch(/^[0-9a-f]{64}$/);
    expect(detail.settlements).toEqual([]);
    await simulate(sandbox, `/sandbox/invoices/${inv.id}/deposit`, { amount: '20', token: 'USDC' });
    await simulate(sandbox, `/sandbox/invoices/${inv.id}/deposit`, { amount: '5' });
    detail = await getInvoice(inv.id);
    expect(detail).toMatchObject({ status: 'OVERPAID', amountReceived: '35.00' });
    expect(detail.payments.map((p: { amount: string }) => p.amount)).toEqual(['10', '20', '5']);
    expect(detail.payments[1].txHash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(detail.settlements.map((s: { amount: string }) => s.amount)).toEqual(['30.00', '5']);
  });

  it('List invoices returns the 100 most recent of the own environment, newest first', async () => {
    const { sandbox, creds, createInvoice, listInvoices } = await setup();
    const ids: string[] = [];
    for (let i = 0; i < 103; i++) ids.push((await createInvoice({ amount: '1', referenceId: `i${i}` })).id);
    await api(sandbox, 'POST', '/v1/invoices', { key: creds.live.merchant.invoiceKey, body: { amount: '1' } });
    const list = await listInvoices();
    expect(list.map((i) => i.id)).toEqual(ids.reverse().slice(0, 100));
  });
});

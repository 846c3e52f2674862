import nock from 'nock';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { CheckoutClient, PartnerClient, checkRequestSignature } from '../../src/client/index.js';
import type { Invoice, InvoiceDetail, Merchant, Payment } from '../../src/schemas/index.js';
import { BASE_URL, PARTNER_OPTIONS, TEST_KEYS, sampleInvoice, sampleInvoiceDetail, sampleMerchant, samplePayment } from '../support/fixtures.js';
import { strictNock } from '../support/strict-nock.js';

interface Seen {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  rawBody: string;
}

/** Intercept one request, record what was sent, answer with `reply`. */
function expectRequest(method: 'GET' | 'POST', path: string, status: number, reply: unknown): Promise<Seen> {
  return new Promise((resolve) => {
    const scope = nock(BASE_URL).intercept(path, method);
    scope.reply(function (uri, body) {
      resolve({ method, path: uri, headers: this.req.headers, rawBody: typeof body === 'string' ? body : JSON.stringify(body) });
      return [status, reply as nock.Body];
    });
  });
}

function assertSigned(seen: Seen, secret: string) {
  const reason = checkRequestSignature({
    header: seen.headers['x-request-signature'] as string,
    method: seen.method,
    path: seen.path,
    body: seen.rawBody,
    secret,
  });
  expect(reason).toBeUndefined();
}

const merchant = new CheckoutClient({
  baseUrl: BASE_URL,
  apiKey: TEST_KEYS.apiKey,
  signingSecret: TEST_KEYS.signingSecret,
  invoiceKey: TEST_KEYS.invoiceKey,
  retries: 0,
});
const partner = new PartnerClient({ ...PARTNER_OPTIONS, retries: 0 });

strictNock();

describe('merchant operations', () => {
  it('payments.create posts the body with bearer, signature and Idempotency-Key and returns a typed Payment', async () => {
    const payment = samplePayment();
    const seen = expectRequest('POST', '/v1/payments', 201, payment);
    const result = await merchant.payments.create(
      { amount: '25.00', email: 'buyer@example.com', token: 'USDT', networkId: 11155111, referenceId: 'order-1' },
      { idempotencyKey: 'order-1-key' },
    );
    const request = await seen;
    expect(request.headers.authorization).toBe(`Bearer ${TEST_KEYS.apiKey}`);
    expect(request.headers['idempotency-key']).toBe('order-1-key');
    expect(request.headers['content-type']).toBe('application/json');
    assertSigned(request, TEST_KEYS.signingSecret);
    expect(JSON.parse(request.rawBody)).toEqual({ amount: '25.00', email: 'buyer@example.com', token: 'USDT', networkId: 11155111, referenceId: 'order-1' });
    expect(result).toEqual(payment);
    expectTypeOf(result).toEqualTypeOf<Payment>();
  });

  it('payments.create generates a UUID Idempotency-Key when none is given', async () => {
    const seen = expectRequest('POST', '/v1/payments', 201, samplePayment());
    await merchant.payments.create({ amount: '1' });
    expect((await seen).headers['idempotency-key']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('payments.get reads one payment, signed, without a body or Idempotency-Key', async () => {
    const payment = samplePayment({ status: 'SOMETHING_NEW', amountReceived: '25.00' });
    const seen = expectRequest('GET', `/v1/payments/${payment.id}`, 200, { ...payment, extraField: { kept: true } });
    const result = await merchant.payments.get(payment.id);
    const request = await seen;
    expect(request.headers.authorization).toBe(`Bearer ${TEST_KEYS.apiKey}`);
    expect(request.headers['idempotency-key']).toBeUndefined();
    assertSigned(request, TEST_KEYS.signingSecret);
    expect(result.status).toBe('SOMETHING_NEW');
    expect((result as Record<string, unknown>).extraField).toEqual({ kept: true });
  });

  it('invoices.create uses the invoice key, no signature, and an Idempotency-Key', async () => {
    const invoice = sampleInvoice();
    const seen = expectRequest('POST', '/v1/invoices', 201, invoice);
    const result = await merchant.invoices.create({ amount: '40.00', networkId: 3448148188, token: 'USDT' }, { idempotencyKey: 'inv-key-1' });
    const request = await seen;
    expect(request.headers.authorization).toBe(`Bearer ${TEST_KEYS.invoiceKey}`);
    expect(request.headers['x-request-signature']).toBeUndefined();
    expect(request.headers['idempotency-key']).toBe('inv-key-1');
    expect(JSON.parse(request.rawBody)).toEqual({ amount: '40.00', networkId: 3448148188, token: 'USDT' });
    expect(result).toEqual(invoice);
    expectTypeOf(result).toEqualTypeOf<Invoice>();
  });

  it('invoices.list accepts a bare array or a { data } wrapper', async () => {
    const invoices = [sampleInvoice(), sampleInvoice()];
    const first = expectRequest('GET', '/v1/invoices', 200, invoices);
    expect(await merchant.invoices.list()).toEqual(invoices);
    expect((await first).headers.authorization).toBe(`Bearer ${TEST_KEYS.invoiceKey}`);
    expectRequest('GET', '/v1/invoices', 200, { data: invoices });
    expect(await merchant.invoices.list()).toEqual(invoices);
  });

  it('invoices.get returns the detail with payments and settlements', async () => {
    const detail = sampleInvoiceDetail({ payments: [{ id: 'p1', amount: '10', status: 'CONFIRMED' }], settlements: [{ id: 's1', amount: '10' }] });
    const seen = expectRequest('GET', `/v1/invoices/${detail.id}`, 200, detail);
    const result = await merchant.invoices.get(detail.id);
    expect((await seen).headers.authorization).toBe(`Bearer ${TEST_KEYS.invoiceKey}`);
    expect(result.payments).toHaveLength(1);
    expect(result.settlements[0]?.amount).toBe('10');
    expectTypeOf(result).toEqualTypeOf<InvoiceDetail>();
  });
});

describe('partner operations', () => {
  it('merchants.create posts with the partner key and signature', async () => {
    const created = sampleMerchant();
    const seen = expectRequest('POST', '/v1/partner/merchants', 201, created);
    const result = await partner.merchants.create({ externalTenantId: 'tenant-1', email: 'shop@example.com', name: 'Shop' }, { idempotencyKey: 'm-1' });
    const request = await seen;
    expect(request.headers.authorization).toBe(`Bearer ${TEST_KEYS.partnerApiKey}`);
    expect(request.headers['idempotency-key']).toBe('m-1');
    assertSigned(request, TEST_KEYS.partnerSigningSecret);
    expect(JSON.parse(request.rawBody)).toEqual({ externalTenantId: 'tenant-1', email: 'shop@example.com', name: 'Shop' });
    expect(result).toEqual(created);
    expectTypeOf(result).toEqualTypeOf<Merchant>();
  });

  it('payments.create posts for a merchant and returns merchantId', async () => {
    const merchantId = '0b6f1c2e-3c51-4d0a-9d8e-0d4f6a1b2c3d';
    const payment = samplePayment({ merchantId });
    const seen = expectRequest('POST', '/v1/partner/payments', 201, payment);
    const result = await partner.payments.create({
      merchantId,
      amount: '25.00',
      email: 'buyer@example.com',
      referenceId: 'order-9',
      successUrl: 'https://shop.example/ok',
      cancelUrl: 'https://shop.example/cancel',
    });
    const request = await seen;
    assertSigned(request, TEST_KEYS.partnerSigningSecret);
    expect(request.headers['idempotency-key']).toBeTruthy();
    expect(JSON.parse(request.rawBody)).toMatchObject({ merchantId, amount: '25.00', successUrl: 'https://shop.example/ok' });
    expect(result.merchantId).toBe(merchantId);
  });
});

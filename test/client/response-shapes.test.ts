import nock from 'nock';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { CheckoutClient, PartnerClient } from '../../src/client/index.js';
import { SchemaValidationError } from '../../src/errors/index.js';
import {
  InvoiceDetailSchema,
  InvoiceSchema,
  MerchantSchema,
  PartnerPaymentSchema,
  PaymentSchema,
  type InvoiceDetail,
  type PartnerPayment,
} from '../../src/schemas/index.js';
import { BASE_URL, PARTNER_OPTIONS, TEST_KEYS, sampleInvoice, sampleInvoiceDetail, sampleMerchant, samplePayment } from '../support/fixtures.js';
import { strictNock } from '../support/strict-nock.js';

// responses are read with the shapes of service-interface.md section 2 (ids and
// chainId UUIDs, ISO 8601 timestamps, non-negative decimal amounts, checkoutUrl a URL, environment
// required, merchantId on the partner create response), while unknown fields, unknown status words
// and odd entries of the invoice detail's payments/settlements stay readable.

const merchant = new CheckoutClient({ baseUrl: BASE_URL, ...TEST_KEYS, retries: 0 });
const partner = new PartnerClient({ ...PARTNER_OPTIONS, retries: 0 });

strictNock();

/** The paths of the issues a parse reports, e.g. `['id', 'depositAddresses.0.chainId']`. */
function failingPaths(result: { success: boolean; error?: { issues: Array<{ path: PropertyKey[] }> } }): string[] {
  expect(result.success).toBe(false);
  return (result.error?.issues ?? []).map((issue) => issue.path.join('.'));
}

describe('ids are UUIDs', () => {
  it('a payment id that is not a UUID is refused', () => {
    expect(failingPaths(PaymentSchema.safeParse(samplePayment({ id: 'pay_123' })))).toEqual(['id']);
  });

  it('a deposit address chainId that is not a UUID is refused (the live Tron chainId had 13 digits in its last group)', () => {
    const payment = samplePayment();
    const depositAddresses = payment.depositAddresses!.map((a) => ({ ...a, chainId: '3f6e1d9c-8b2a-4c5d-a7e0-0000728126428' }));
    expect(failingPaths(PaymentSchema.safeParse({ ...payment, depositAddresses }))).toEqual(['depositAddresses.0.chainId']);
    const invoice = sampleInvoice();
    const addresses = invoice.addresses!.map((a) => ({ ...a, chainId: 'tron-mainnet' }));
    expect(failingPaths(InvoiceSchema.safeParse({ ...invoice, addresses }))).toEqual(['addresses.0.chainId']);
  });

  it('merchant ids (merchantId, organizationId, partnerId) that are not UUIDs are refused', () => {
    expect(failingPaths(MerchantSchema.safeParse(sampleMerchant({ merchantId: 'm-1', organizationId: 'org', partnerId: '42' }))).sort()).toEqual([
      'merchantId',
      'organizationId',
      'partnerId',
    ]);
    expect(failingPaths(PaymentSchema.safeParse(samplePayment({ merchantId: 'm-1' })))).toEqual(['merchantId']);
  });
});

describe('timestamps are ISO 8601', () => {
  it.each(['Nov 22 2026', '1', '2026-11-22', '2026-11-22T10:00:00'])('%j is refused (Date.parse took it)', (value) => {
    expect(failingPaths(PaymentSchema.safeParse(samplePayment({ expiresAt: value, createdAt: value })))).toEqual(['expiresAt', 'createdAt']);
  });

  it.each(['2026-11-22T10:00:00Z', '2026-11-22T10:00:00.123Z', '2026-11-22T10:00:00+00:00'])('%j is accepted', (value) => {
    expect(PaymentSchema.safeParse(samplePayment({ expiresAt: value })).success).toBe(true);
  });
});

describe('amounts are non-negative decimal strings', () => {
  it.each(['amount', 'amountReceived', 'remaining', 'surplus'] as const)('a negative %s is refused', (field) => {
    expect(failingPaths(PaymentSchema.safeParse(samplePayment({ [field]: '-1.00' })))).toEqual([field]);
  });

  it('a negative invoice amount is refused', () => {
    expect(failingPaths(InvoiceSchema.safeParse(sampleInvoice({ amountReceived: '-0.5' })))).toEqual(['amountReceived']);
  });
});

describe('checkoutUrl is an http(s) URL', () => {
  it.each(['/checkout/abc', 'not a url', 'javascript:alert(1)'])('%j is refused', (checkoutUrl) => {
    expect(failingPaths(PaymentSchema.safeParse(samplePayment({ checkoutUrl })))).toEqual(['checkoutUrl']);
    expect(failingPaths(InvoiceSchema.safeParse(sampleInvoice({ checkoutUrl })))).toEqual(['checkoutUrl']);
  });
});

describe('environment is required', () => {
  it('a payment or invoice without environment is refused', () => {
    const { environment: _p, ...payment } = samplePayment();
    const { environment: _i, ...invoice } = sampleInvoice();
    expect(failingPaths(PaymentSchema.safeParse(payment))).toEqual(['environment']);
    expect(failingPaths(InvoiceSchema.safeParse(invoice))).toEqual(['environment']);
  });
});

describe('partner create payment carries merchantId', () => {
  it('a response without merchantId is a SchemaValidationError', async () => {
    nock(BASE_URL).post('/v1/partner/payments').reply(201, samplePayment());
    const error = await partner.payments.create({ merchantId: '0b6f1c2e-3c51-4d0a-9d8e-0d4f6a1b2c3d', amount: '5' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SchemaValidationError);
    expect((error as SchemaValidationError).issues.map((issue) => issue.path.join('.'))).toEqual(['merchantId']);
  });

  it('the result is typed with a required merchantId', async () => {
    const merchantId = '0b6f1c2e-3c51-4d0a-9d8e-0d4f6a1b2c3d';
    nock(BASE_URL).post('/v1/partner/payments').reply(201, samplePayment({ merchantId }));
    const payment = await partner.payments.create({ merchantId, amount: '5' });
    expect(payment.merchantId).toBe(merchantId);
    expectTypeOf(payment).toEqualTypeOf<PartnerPayment>();
    expectTypeOf(payment.merchantId).toEqualTypeOf<string>();
    expect(PartnerPaymentSchema.safeParse(samplePayment()).success).toBe(false);
  });
});

describe('still tolerant where the spec is silent', () => {
  it('unknown fields, unknown status words and unknown families are kept', () => {
    const payment = samplePayment({ status: 'AWAITING_CONFIRMATIONS', future: { nested: [1] } } as Record<string, unknown>);
    payment.depositAddresses = payment.depositAddresses!.map((a) => ({ ...a, family: 'solana', memo: 'x' }));
    const parsed = PaymentSchema.parse(payment);
    expect(parsed).toEqual(payment);
  });

  it('an invoice detail whose payments/settlements entries contain nulls and odd fields still parses', async () => {
    const detail = {
      ...sampleInvoiceDetail({ status: 'PAID', amount: '40.00', amountReceived: '40.00' }),
      payments: [
        null,
        {
          id: 'p1',
          status: 'CONFIRMED',
          amount: '40.00',
          amountReceived: null,
          token: null,
          networkId: '3448148188',
          txHash: 7,
          createdAt: 'yesterday',
          confirmations: 12,
        },
        'garbage',
      ],
      settlements: [{ id: null, status: 'SETTLED', amount: 40, createdAt: null, fee: { amount: '0.1' } }, null],
    };
    nock(BASE_URL).get(`/v1/invoices/${detail.id}`).reply(200, detail);
    const result = await merchant.invoices.get(detail.id);
    expectTypeOf(result).toEqualTypeOf<InvoiceDetail>();
    expect(result).toMatchObject({ id: detail.id, status: 'PAID', amountReceived: '40.00' });
    // Objects are kept with their well-typed and unknown fields; odd values read as absent.
    expect(result.payments).toHaveLength(1);
    expect(result.payments[0]).toMatchObject({ id: 'p1', status: 'CONFIRMED', amount: '40.00', confirmations: 12 });
    for (const field of ['amountReceived', 'token', 'networkId', 'txHash', 'createdAt'] as const) expect(result.payments[0]?.[field]).toBeUndefined();
    expect(result.settlements).toHaveLength(1);
    expect(result.settlements[0]).toMatchObject({ status: 'SETTLED', fee: { amount: '0.1' } });
    expect(result.settlements[0]?.amount).toBeUndefined();
  });

  it('payments or settlements that are null, missing or not arrays read as empty lists', () => {
    const base = sampleInvoice();
    expect(InvoiceDetailSchema.parse({ ...base, payments: null, settlements: 'n/a' })).toMatchObject({ payments: [], settlements: [] });
    expect(InvoiceDetailSchema.parse(base)).toMatchObject({ payments: [], settlements: [] });
  });

  it('optional strings sent as null (referenceId, token, email, successUrl, cancelUrl) are still read', () => {
    const payment = samplePayment({ token: null, referenceId: null, email: null, successUrl: null, cancelUrl: null, expiresAt: null });
    expect(PaymentSchema.parse(payment)).toEqual(payment);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CheckoutClient, PartnerClient } from '../../src/client/index.js';
import { ApiError } from '../../src/errors/index.js';
import { InvoiceDetailSchema, InvoiceSchema, MerchantSchema, PaymentSchema, parseEventEnvelope } from '../../src/schemas/index.js';
import type { SandboxCredentials, SandboxHandle } from '../../src/sandbox/index.js';
import { EVM_ADDRESS_RE, TRON_ADDRESS_RE, UUID_RE, cleanup, openSandbox, readCredentials, simulate } from './helpers.js';

// Conformance A: the seven operations driven by the project's own clients over real HTTP.
let sandbox: SandboxHandle;
let credentials: SandboxCredentials;
let merchant: CheckoutClient;
let partner: PartnerClient;

function clientsFor(environment: 'test' | 'live') {
  const c = credentials[environment];
  return {
    merchant: new CheckoutClient({
      baseUrl: credentials.baseUrl,
      apiKey: c.merchant.apiKey,
      signingSecret: c.merchant.signingSecret,
      invoiceKey: c.merchant.invoiceKey,
      retries: 0,
    }),
    partner: new PartnerClient({ baseUrl: credentials.baseUrl, apiKey: c.partner.apiKey, signingSecret: c.partner.signingSecret, retries: 0 }),
  };
}

beforeAll(async () => {
  sandbox = await openSandbox();
  credentials = await readCredentials(sandbox);
  ({ merchant, partner } = clientsFor('test'));
});
afterAll(cleanup);

describe('credentials.json', () => {
  it('has the shape of contract 6 with keys of the right formats and the sandbox URL', () => {
    expect(credentials.baseUrl).toBe(sandbox.url);
    expect(credentials.webhookSecret).toMatch(/^whsec_[A-Za-z0-9+/=]+$/);
    for (const env of ['test', 'live'] as const) {
      expect(Object.keys(credentials[env]).sort()).toEqual(['merchant', 'partner']);
      expect(credentials[env].partner.apiKey).toMatch(new RegExp(`^svc_pk_${env}_`));
      expect(credentials[env].partner.signingSecret).toMatch(/^svc_ps_/);
      expect(credentials[env].merchant.apiKey).toMatch(new RegExp(`^svc_mk_${env}_`));
      expect(credentials[env].merchant.signingSecret).toMatch(/^svc_ms_/);
      expect(credentials[env].merchant.invoiceKey).toMatch(new RegExp(`^${env}_`));
      expect(credentials[env].merchant.merchantId).toMatch(UUID_RE);
    }
  });
});

describe('the seven operations through CheckoutClient and PartnerClient', () => {
  it('4.2 create merchant returns a Merchant of the partner', async () => {
    const created = await partner.merchants.create({ externalTenantId: 'tenant-42', email: 'shop@example.com', name: 'Shop 42' });
    expect(MerchantSchema.parse(created)).toEqual(created);
    expect(created.merchantId).toMatch(UUID_RE);
    expect(created).toMatchObject({ externalTenantId: 'tenant-42', email: 'shop@example.com', name: 'Shop 42', registeredFamilies: { evm: true, tron: true } });
    expect(created.wallets?.map((w) => w.networkId).sort()).toEqual([11155111, 3448148188]);
  });

  it('4.1 partner create payment for its new merchant carries merchantId; Get payment by the seeded merchant does not', async () => {
    const shop = await partner.merchants.create({ externalTenantId: 'tenant-43', email: 'shop43@example.com', name: 'Shop 43' });
    const payment = await partner.payments.create({
      merchantId: shop.merchantId,
      amount: '12.34',
      email: 'buyer@example.com',
      referenceId: 'order-p1',
      successUrl: 'https://shop.example/ok',
      cancelUrl: 'https://shop.example/cancel',
    });
    expect(payment.merchantId).toBe(shop.merchantId);
    expect(payment).toMatchObject({
      status: 'CREATED',
      environment: 'test',
      amount: '12.34',
      amountReceived: '0',
      remaining: '12.34',
      surplus: '0.00',
      referenceId: 'order-p1',
    });
    expect(payment.checkoutUrl).toBe(`${sandbox.url}/checkout/${payment.id}`);

    // A payment for the seeded merchant is readable with that merchant's key, without merchantId.
    const own = await partner.payments.create({ merchantId: credentials.test.merchant.merchantId, amount: '5' });
    const read = await merchant.payments.get(own.id);
    expect(read.id).toBe(own.id);
    expect(read).not.toHaveProperty('merchantId');
  });

  it('4.6 create payment and 4.7 get payment agree, with EVM and Tron testnet addresses', async () => {
    const payment = await merchant.payments.create({ amount: '25.00', email: 'buyer@example.com', referenceId: 'order-1' });
    expect(PaymentSchema.parse(payment)).toEqual(payment);
    expect(payment).not.toHaveProperty('merchantId');
    const networks = new Set(payment.depositAddresses?.map((a) => a.networkId));
    expect(networks).toEqual(new Set([11155111, 3448148188]));
    for (const address of payment.depositAddresses ?? []) {
      expect(address.address).toMatch(address.family === 'evm' ? EVM_ADDRESS_RE : TRON_ADDRESS_RE);
      expect(address.chainId).toMatch(UUID_RE);
    }
    expect(await merchant.payments.get(payment.id)).toEqual(payment);
  });

  it('4.6 with token and networkId limits the deposit addresses; unavailable ones are 422', async () => {
    const payment = await merchant.payments.create({ amount: '3', token: 'USDC', networkId: 11155111 });
    expect(payment.token).toBe('USDC');
    expect(payment.depositAddresses?.map((a) => [a.networkId, a.token])).toEqual([[11155111, 'USDC']]);

    const tokenError = await merchant.payments.create({ amount: '3', token: 'DAI' }).catch((e: unknown) => e);
    expect(tokenError).toBeInstanceOf(ApiError);
    expect(tokenError).toMatchObject({ status: 422, code: 'token_not_available' });
    const networkError = await merchant.payments.create({ amount: '3', networkId: 1 }).catch((e: unknown) => e);
    expect(networkError).toMatchObject({ status: 422, code: 'network_not_available' });
  });

  it('4.3 create invoice, 4.4 list invoices and 4.5 get invoice', async () => {
    const first = await merchant.invoices.create({ amount: '40.00', referenceId: 'inv-1' });
    const second = await merchant.invoices.create({ amount: '10', networkId: 3448148188 });
    expect(InvoiceSchema.parse(first)).toEqual(first);
    expect(first).toMatchObject({ status: 'CREATED', environment: 'test', amount: '40.00', amountReceived: '0', referenceId: 'inv-1' });
    expect(first.addresses?.map((a) => a.networkId).sort()).toEqual([11155111, 3448148188]);
    expect(second.addresses).toHaveLength(1);
    expect(second.addresses?.[0]?.depositAddress).toMatch(TRON_ADDRESS_RE);
    expect(second.addresses?.[0]?.tokens).toEqual([{ symbol: 'USDT', contractAddress: 'TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf', decimals: 6 }]);

    const list = await merchant.invoices.list();
    expect(list.slice(0, 2).map((i) => i.id)).toEqual([second.id, first.id]);

    const detail = await merchant.invoices.get(first.id);
    expect(InvoiceDetailSchema.parse(detail)).toEqual(detail);
    expect(detail).toMatchObject({ id: first.id, payments: [], settlements: [] });

    expect((await simulate(sandbox, `/sandbox/invoices/${first.id}/deposit`, { amount: '40.00' })).status).toBe(200);
    const paid = await merchant.invoices.get(first.id);
    expect(paid).toMatchObject({ status: 'PAID', amountReceived: '40.00' });
    expect(paid.payments).toHaveLength(1);
    expect(paid.payments[0]).toMatchObject({ amount: '40.00', status: 'CONFIRMED' });
    expect(paid.settlements).toEqual([expect.objectContaining({ amount: '40.00', status: 'SETTLED' })]);
  });

  it('live keys create live records on mainnets, invisible to test keys', async () => {
    const live = clientsFor('live');
    const payment = await live.merchant.payments.create({ amount: '1' });
    expect(payment.environment).toBe('live');
    expect(new Set(payment.depositAddresses?.map((a) => a.networkId))).toEqual(new Set([1, 728126428]));
    const invoice = await live.merchant.invoices.create({ amount: '2' });
    expect((await live.merchant.invoices.list()).map((i) => i.id)).toContain(invoice.id);
    expect((await merchant.invoices.list()).map((i) => i.id)).not.toContain(invoice.id);
    // Another merchant's record (here: of the other environment) is not found, never 403.
    const crossed = await merchant.payments.get(payment.id).catch((e: unknown) => e);
    expect(crossed).toBeInstanceOf(ApiError);
    expect(crossed).toMatchObject({ status: 404, code: 'not_found' });
    const crossedInvoice = await merchant.invoices.get(invoice.id).catch((e: unknown) => e);
    expect(crossedInvoice).toMatchObject({ status: 404, code: 'not_found' });
  });

  it('a partner client paying its own merchant of the other environment gets 403 forbidden', async () => {
    const error = await partner.payments.create({ merchantId: credentials.live.merchant.merchantId, amount: '1' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 403, code: 'forbidden' });
    const live = await clientsFor('live').partner.payments.create({ merchantId: credentials.live.merchant.merchantId, amount: '1' });
    expect(live).toMatchObject({ environment: 'live', merchantId: credentials.live.merchant.merchantId });
  });

  it('the live Tron network has a UUID chainId the client reads', async () => {
    const live = clientsFor('live');
    const payment = await live.merchant.payments.create({ amount: '1', networkId: 728126428 });
    const invoice = await live.merchant.invoices.create({ amount: '1', networkId: 728126428 });
    expect(payment.depositAddresses?.map((a) => a.chainId)).toEqual([expect.stringMatching(UUID_RE)]);
    expect(invoice.addresses?.map((a) => a.chainId)).toEqual([expect.stringMatching(UUID_RE)]);
  });

  it('the simulation answers and every emitted event are readable by the client schemas', async () => {
    const payment = await merchant.payments.create({ amount: '8' });
    const invoice = await merchant.invoices.create({ amount: '8' });
    const answers = [
      [PaymentSchema, await simulate(sandbox, `/sandbox/payments/${payment.id}/deposit`, { amount: '9' })],
      [InvoiceDetailSchema, await simulate(sandbox, `/sandbox/invoices/${invoice.id}/deposit`, { amount: '3' })],
      [InvoiceDetailSchema, await simulate(sandbox, `/sandbox/invoices/${invoice.id}/expire`)],
    ] as const;
    for (const [schema, answer] of answers) {
      expect(answer.status).toBe(200);
      expect(schema.parse(answer.body)).toStrictEqual(answer.body);
    }
    for (const event of sandbox.events()) {
      const parsed = parseEventEnvelope(event);
      expect(parsed.success, `${event.type}: ${JSON.stringify(parsed.error?.issues)}`).toBe(true);
    }
  });
});

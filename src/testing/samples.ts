import { randomUUID } from 'node:crypto';
import type { Invoice, InvoiceDetail, Merchant, Payment } from '../schemas/index.js';

/** A test-environment payment of 25.00 USDT on Sepolia, nothing received yet, expiring in an hour. */
export function samplePayment(overrides: Partial<Payment> = {}): Payment {
  const now = new Date().toISOString();
  return {
    id: randomUUID(),
    status: 'CREATED',
    environment: 'test',
    addressMode: 'invoice',
    amount: '25.00',
    amountReceived: '0',
    remaining: '25.00',
    surplus: '0',
    token: 'USDT',
    referenceId: 'order-1',
    email: 'buyer@example.com',
    checkoutUrl: 'https://pay.checkout.test/c/abc',
    expiresAt: new Date(Date.now() + 3600_000).toISOString(),
    successUrl: 'https://shop.example/success',
    cancelUrl: 'https://shop.example/cancel',
    depositAddresses: [
      { networkId: 11155111, chainName: 'Sepolia', family: 'evm', address: '0x52908400098527886E0F7030069857D2E4169EE7', token: 'USDT', chainId: randomUUID() },
    ],
    createdAt: now,
    updatedAt: now,
    ...overrides,
  };
}

/** A test-environment invoice of 40.00 with one Tron (Nile) address. */
export function sampleInvoice(overrides: Partial<Invoice> = {}): Invoice {
  return {
    id: randomUUID(),
    status: 'CREATED',
    environment: 'test',
    amount: '40.00',
    amountReceived: '0',
    referenceId: 'inv-1',
    checkoutUrl: 'https://pay.checkout.test/i/abc',
    expiresAt: new Date(Date.now() + 3600_000).toISOString(),
    addresses: [
      {
        chainId: randomUUID(),
        chainName: 'Nile',
        family: 'tron',
        networkId: 3448148188,
        depositAddress: 'TLa2f6VPqDgRE67v1736s7bJ8Ray5wYjU7',
        tokens: [{ symbol: 'USDT', contractAddress: 'TXYZopYRdj2D9XRtbG411XZZ3kM5VkAeBf', decimals: 6 }],
      },
    ],
    ...overrides,
  };
}

/** An invoice as Get invoice returns it (with payments and settlements). */
export function sampleInvoiceDetail(overrides: Partial<InvoiceDetail> = {}): InvoiceDetail {
  return { ...sampleInvoice(), payments: [], settlements: [], ...overrides };
}

/** A merchant as Create merchant returns it. */
export function sampleMerchant(overrides: Partial<Merchant> = {}): Merchant {
  const now = new Date().toISOString();
  return {
    merchantId: randomUUID(),
    organizationId: randomUUID(),
    partnerId: randomUUID(),
    externalTenantId: 'tenant-1',
    name: 'Shop',
    email: 'shop@example.com',
    integrationStatus: 'PENDING',
    dashboardAccess: false,
    wallets: [],
    registeredFamilies: { evm: true, tron: false },
    createdAt: now,
    updatedAt: now,
    ...overrides,
  };
}

import { randomUUID } from 'node:crypto';
import type { Invoice, InvoiceDetail } from '../../schemas/index.js';
import { newAddress } from '../addresses.js';
import { remainingOf, surplusOf } from '../amounts.js';
import type { InvoiceRecord } from '../records.js';
import { checkoutUrlOf, type NewChargeContext } from './payments.js';

export interface NewInvoiceInput {
  amount: string;
  networkId?: number | undefined;
  token?: string | undefined;
  referenceId?: string | undefined;
  successUrl?: string | undefined;
  cancelUrl?: string | undefined;
}

/** A new invoice with a pre-computed address on every allowed network (spec 4.3). */
export function newInvoice(input: NewInvoiceInput, context: NewChargeContext): InvoiceRecord {
  const at = context.now.toISOString();
  return {
    kind: 'invoice',
    id: randomUUID(),
    environment: context.environment,
    merchantId: context.merchantId,
    status: 'CREATED',
    amount: input.amount,
    amountReceived: '0',
    token: input.token !== undefined ? (context.routes[0]?.tokens[0]?.symbol ?? null) : null,
    networkId: input.networkId ?? null,
    referenceId: input.referenceId ?? null,
    successUrl: input.successUrl ?? null,
    cancelUrl: input.cancelUrl ?? null,
    expiresAt: new Date(context.now.getTime() + context.expiresAfterMs).toISOString(),
    createdAt: at,
    updatedAt: at,
    seq: context.seq,
    expiryNotified: false,
    deposits: [],
    settlements: [],
    addresses: context.routes.map(({ network, tokens }) => ({
      chainId: network.chainId,
      chainName: network.chainName,
      family: network.family,
      networkId: network.networkId,
      depositAddress: newAddress(network.family),
      tokens: tokens.map((t) => ({ symbol: t.symbol, contractAddress: t.contractAddress, decimals: t.decimals })),
    })),
  };
}

/** The spec's Invoice (2.3) as Create and List return it, with `remaining` and `surplus` added. */
export function invoiceView(record: InvoiceRecord, baseUrl: string): Invoice {
  return {
    id: record.id,
    status: record.status,
    environment: record.environment,
    amount: record.amount,
    amountReceived: record.amountReceived,
    remaining: remainingOf(record.amount, record.amountReceived),
    surplus: surplusOf(record.amount, record.amountReceived),
    token: record.token,
    networkId: record.networkId,
    referenceId: record.referenceId,
    checkoutUrl: checkoutUrlOf(baseUrl, record.id),
    expiresAt: record.expiresAt,
    successUrl: record.successUrl,
    cancelUrl: record.cancelUrl,
    addresses: record.addresses,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
  };
}

/** Get invoice (contract 3f): the invoice plus its payments (one per deposit) and settlements. */
export function invoiceDetailView(record: InvoiceRecord, baseUrl: string): InvoiceDetail {
  return {
    ...invoiceView(record, baseUrl),
    payments: record.deposits.map((d) => ({
      id: d.id,
      status: 'CONFIRMED',
      amount: d.amount,
      amountReceived: d.amount,
      token: d.token,
      networkId: d.networkId,
      chainName: d.chainName,
      address: d.address,
      txHash: d.txHash,
      late: d.late,
      createdAt: d.createdAt,
    })),
    settlements: record.settlements.map((s) => ({ ...s })),
  };
}

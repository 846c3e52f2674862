import type { z } from 'zod';
import type { Invoice, InvoiceDetail } from '../../schemas/index.js';
import { newAddress } from '../addresses.js';
import { remainingOf, surplusOf } from '../amounts.js';
import type { InvoiceRecord } from '../records.js';
import type { CreateInvoiceBody } from '../requests.js';
import { checkoutUrlOf, newCharge, type NewChargeContext } from './payments.js';
import { withoutNulls } from './without-nulls.js';

/** A create-invoice request as the sandbox validated it. */
export type NewInvoiceInput = z.output<typeof CreateInvoiceBody>;

/** A new invoice with a pre-computed address on every allowed network (spec 4.3). */
export function newInvoice(input: NewInvoiceInput, context: NewChargeContext): InvoiceRecord {
  return {
    kind: 'invoice',
    ...newCharge(input, context),
    networkId: input.networkId ?? null,
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

/**
 * The spec's Invoice (2.3) as Create and List return it, with `remaining` and `surplus` added and
 * fields not given left out (never `null`).
 */
export function invoiceView(record: InvoiceRecord, baseUrl: string): Invoice {
  return withoutNulls({
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
  });
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

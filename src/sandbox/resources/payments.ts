import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import type { Environment, Payment } from '../../schemas/index.js';
import { newAddress } from '../addresses.js';
import { remainingOf, surplusOf } from '../amounts.js';
import type { Route } from '../networks.js';
import type { ChargeRecord, PaymentRecord } from '../records.js';
import type { CreatePaymentBody } from '../requests.js';
import { withoutNulls } from './without-nulls.js';

/** A create-payment request as the sandbox validated it. */
export type NewPaymentInput = z.output<typeof CreatePaymentBody>;

export interface NewChargeContext {
  environment: Environment;
  merchantId: string;
  routes: Route[];
  now: Date;
  expiresAfterMs: number;
  seq: number;
}

/**
 * What a new payment and a new invoice share: unpaid, no deposits, expiring `expiresAfterMs` from
 * now. A requested token is recorded as the first allowed route spells it (the request's match is
 * case-insensitive); without one, `token` is null.
 */
export function newCharge(
  input: Pick<NewPaymentInput, 'amount' | 'token' | 'referenceId' | 'successUrl' | 'cancelUrl'>,
  context: NewChargeContext,
): ChargeRecord & { token: string | null } {
  const at = context.now.toISOString();
  return {
    id: randomUUID(),
    environment: context.environment,
    merchantId: context.merchantId,
    status: 'CREATED',
    amount: input.amount,
    amountReceived: '0',
    token: input.token !== undefined ? (context.routes[0]?.tokens[0]?.symbol ?? null) : null,
    referenceId: input.referenceId ?? null,
    successUrl: input.successUrl ?? null,
    cancelUrl: input.cancelUrl ?? null,
    expiresAt: new Date(context.now.getTime() + context.expiresAfterMs).toISOString(),
    createdAt: at,
    updatedAt: at,
    seq: context.seq,
    expiryNotified: false,
    deposits: [],
  };
}

/** A new payment with one fresh address per allowed network, listed once per allowed token. */
export function newPayment(input: NewPaymentInput, context: NewChargeContext): PaymentRecord {
  return {
    kind: 'payment',
    ...newCharge(input, context),
    email: input.email ?? null,
    depositAddresses: context.routes.flatMap(({ network, tokens }) => {
      const address = newAddress(network.family);
      return tokens.map((token) => ({
        networkId: network.networkId,
        chainName: network.chainName,
        family: network.family,
        address,
        token: token.symbol,
        chainId: network.chainId,
      }));
    }),
  };
}

/** `{base}/checkout/{id}`: the hosted checkout page of a payment or invoice. */
export function checkoutUrlOf(baseUrl: string, id: string): string {
  return `${baseUrl}/checkout/${id}`;
}

/**
 * The spec's Payment (2.1) as Get payment returns it, fields not given left out (never `null`);
 * `withMerchantId` for what a partner is given of its merchants' payments (create, get, events).
 */
export function paymentView(record: PaymentRecord, baseUrl: string, withMerchantId = false): Payment {
  const payment = withoutNulls({
    id: record.id,
    status: record.status,
    environment: record.environment,
    addressMode: 'invoice',
    amount: record.amount,
    amountReceived: record.amountReceived,
    remaining: remainingOf(record.amount, record.amountReceived),
    surplus: surplusOf(record.amount, record.amountReceived),
    token: record.token,
    referenceId: record.referenceId,
    email: record.email,
    checkoutUrl: checkoutUrlOf(baseUrl, record.id),
    expiresAt: record.expiresAt,
    successUrl: record.successUrl,
    cancelUrl: record.cancelUrl,
    depositAddresses: record.depositAddresses,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
  });
  return withMerchantId ? { ...payment, merchantId: record.merchantId } : payment;
}

import { amountIsZero } from '../../money/index.js';
import { excessOf, halfOf, isFullyPaid, percentOf, remainingOf, surplusOf } from '../amounts.js';
import type { AnyCharge, Status } from '../records.js';
import { depositOptions, isPastExpiry, type DepositOption } from '../resources/charges.js';

/** What the checkout page shows, polled every second from `/checkout/{id}/state`. */
export interface CheckoutState {
  id: string;
  kind: 'payment' | 'invoice';
  environment: 'test' | 'live';
  status: Status;
  amount: string;
  amountReceived: string;
  remaining: string;
  surplus: string;
  /** Received as a whole percentage of the amount, rounded down, 0..100, for the progress bar. */
  percent: number;
  token: string | null;
  expiresAt: string;
  paid: boolean;
  pastExpiry: boolean;
  successUrl: string | null;
  cancelUrl: string | null;
  options: DepositOption[];
  /** Amounts of the simulation buttons (test environment only; null where a button does not apply). */
  simulate: { half: string | null; full: string | null; excess: string; canExpire: boolean } | null;
}

export function checkoutStateOf(record: AnyCharge, now: Date): CheckoutState {
  const remaining = remainingOf(record.amount, record.amountReceived);
  const paid = isFullyPaid(record.amount, record.amountReceived);
  return {
    id: record.id,
    kind: record.kind,
    environment: record.environment,
    status: record.status,
    amount: record.amount,
    amountReceived: record.amountReceived,
    remaining,
    surplus: surplusOf(record.amount, record.amountReceived),
    percent: percentOf(record.amount, record.amountReceived),
    token: record.token,
    expiresAt: record.expiresAt,
    paid,
    pastExpiry: isPastExpiry(record, now),
    successUrl: record.successUrl,
    cancelUrl: record.cancelUrl,
    options: depositOptions(record),
    simulate:
      record.environment === 'test'
        ? {
            half: amountIsZero(remaining) ? null : halfOf(remaining),
            full: amountIsZero(remaining) ? null : remaining,
            excess: excessOf(remaining, record.amount),
            canExpire: !paid && !record.expiryNotified,
          }
        : null,
  };
}

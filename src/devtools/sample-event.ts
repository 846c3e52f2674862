import { randomUUID } from 'node:crypto';
import { maxAmount, subtractAmounts } from '../money/index.js';
import { EVENT_TYPES, SAMPLE_EVENT_PREFIX, type CheckoutEvent, type KnownEventType } from '../schemas/index.js';
import { sampleEvent, sampleInvoiceDetail, samplePayment } from '../testing/index.js';
import type { EventSuffix } from './scenarios.js';

/** Status and money received when an event of each kind is sent, per resource amount. */
const STATES: Record<EventSuffix, { status: string; received: { payment: string; invoice: string }; expired: boolean }> = {
  created: { status: 'CREATED', received: { payment: '0', invoice: '0' }, expired: false },
  partially_paid: { status: 'PARTIALLY_PAID', received: { payment: '10.00', invoice: '16.00' }, expired: false },
  paid: { status: 'PAID', received: { payment: '25.00', invoice: '40.00' }, expired: false },
  overpaid: { status: 'OVERPAID', received: { payment: '30.00', invoice: '45.00' }, expired: false },
  expired: { status: 'EXPIRED', received: { payment: '0', invoice: '0' }, expired: true },
};

export function isKnownEventType(type: string): type is KnownEventType {
  return (EVENT_TYPES as readonly string[]).includes(type);
}

/**
 * A realistic test-environment event of `type` (contract 3c and 3d) whose amounts agree with the
 * type: `payment.paid` carries a payment of 25.00 with 25.00 received, `invoice.overpaid` an
 * invoice of 40.00 with 45.00 received and settled. Its id starts with `sample_` (`isSampleEvent`):
 * the resource it names exists nowhere, and `attachFulfillment` leaves it alone.
 * @example sampleEventOf('invoice.overpaid')
 */
export function sampleEventOf(type: KnownEventType): CheckoutEvent {
  const [kind, suffix] = type.split('.') as ['payment' | 'invoice', EventSuffix];
  const state = STATES[suffix];
  const amountReceived = state.received[kind];
  const expiresAt = new Date(Date.now() + (state.expired ? -60_000 : 3_600_000)).toISOString();
  const id = `${SAMPLE_EVENT_PREFIX}evt_${randomUUID().replaceAll('-', '')}`;
  if (kind === 'payment') {
    const amount = '25.00';
    const remaining = maxAmount(subtractAmounts(amount, amountReceived), '0');
    const surplus = maxAmount(subtractAmounts(amountReceived, amount), '0');
    return { ...sampleEvent(type, samplePayment({ status: state.status, amount, amountReceived, remaining, surplus, expiresAt })), id };
  }
  const settled = suffix === 'paid' || suffix === 'overpaid';
  const settlements = settled ? [{ id: randomUUID(), status: 'SETTLED', amount: amountReceived, createdAt: new Date().toISOString() }] : [];
  return { ...sampleEvent(type, sampleInvoiceDetail({ status: state.status, amount: '40.00', amountReceived, expiresAt, settlements })), id };
}

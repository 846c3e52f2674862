import type { FulfillmentHandlers, InvoiceDetail, Payment } from 'checkout-kit';
import { fulfillmentContext, samplePayment } from 'checkout-kit/testing';
import { describe, expect, it } from 'vitest';
import fulfillment from '../fulfillment.js';
import { getOrder } from '../src/orders.js';

const HOUR = 3_600_000;
const past = () => new Date(Date.now() - HOUR).toISOString();

/** Call the merchant's handler for `outcome` as checkout-kit would. */
async function handle(outcome: keyof FulfillmentHandlers, resource: Payment | InvoiceDetail) {
  const handler = fulfillment[outcome];
  if (!handler) throw new Error(`fulfillment.ts has no ${outcome} handler`);
  await handler(resource, fulfillmentContext(resource, { outcome }));
}

describe('fulfillment handlers', () => {
  it('marks a paid order paid and ships it once, however often it is called', async () => {
    const payment = samplePayment({ referenceId: 'order-paid', status: 'PAID', amountReceived: '25.00', remaining: '0' });
    await handle('paid', payment);
    await handle('paid', payment);
    expect(getOrder('order-paid')).toMatchObject({ state: 'paid', shipments: 1, late: false });
  });

  it('records the surplus of an overpaid order for a refund', async () => {
    const payment = samplePayment({ referenceId: 'order-over', status: 'OVERPAID', amountReceived: '30.50', remaining: '0', surplus: '5.50' });
    await handle('overpaid', payment);
    expect(getOrder('order-over')).toMatchObject({ state: 'paid', surplus: '5.50', shipments: 1 });
  });

  it('records the shortfall of an underpaid, expired order', async () => {
    const payment = samplePayment({ referenceId: 'order-under', status: 'EXPIRED', amountReceived: '10.00', remaining: '15.00', expiresAt: past() });
    await handle('underpaid', payment);
    expect(getOrder('order-under')).toMatchObject({ state: 'underpaid', shortfall: '15.00', shipments: 0 });
  });

  it('releases an expired order, and still ships it when the money arrives late', async () => {
    const expired = samplePayment({ referenceId: 'order-late', status: 'EXPIRED', expiresAt: past() });
    await handle('expired', expired);
    expect(getOrder('order-late')).toMatchObject({ state: 'expired', shipments: 0 });

    const paidLate = { ...expired, status: 'PAID', amountReceived: '25.00', remaining: '0' };
    expect(fulfillmentContext(paidLate).late).toBe(true);
    await handle('paid', paidLate);
    expect(getOrder('order-late')).toMatchObject({ state: 'paid', late: true, shipments: 1 });
  });
});

import type { Payment } from 'checkout-kit';
import { fulfillmentContext, samplePayment } from 'checkout-kit/testing';
import { describe, expect, it } from 'vitest';
import fulfillment from '../fulfillment.js';
import { getOrder } from '../src/orders.js';

/** Call the paid handler as checkout-kit would for one tenant's payment. */
const paid = (payment: Payment, tenantId: string) => fulfillment.paid!(payment, fulfillmentContext(payment, { outcome: 'paid', tenantId }));

describe('a tenant’s orders', () => {
  it('two tenants’ order 1001 are two orders, each shipped once', async () => {
    const ofA = samplePayment({ referenceId: '1001', status: 'PAID', amountReceived: '25.00', remaining: '0' });
    const ofB = samplePayment({ referenceId: '1001', status: 'PAID', amountReceived: '25.00', remaining: '0' });
    await paid(ofA, 'shop-a');
    await paid(ofA, 'shop-a');
    await paid(ofB, 'shop-b');
    expect(getOrder('shop-a/1001')).toMatchObject({ state: 'paid', shipments: 1 });
    expect(getOrder('shop-b/1001')).toMatchObject({ state: 'paid', shipments: 1 });
  });
});

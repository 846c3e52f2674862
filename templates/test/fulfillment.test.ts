import { loadConfig, newWebhookSecret, silentLogger, type FulfillmentHandlers, type InvoiceDetail, type Payment } from 'checkout-kit';
import { fulfillmentContext, sampleEvent, samplePayment, signedWebhook } from 'checkout-kit/testing';
import { describe, expect, it } from 'vitest';
import fulfillment from '../fulfillment.js';
import { getOrder } from '../src/orders.js';
import { buildServer } from '../src/server.js';

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
    expect(getOrder('order-over')).toMatchObject({ state: 'paid', surplus: '5.5', shipments: 1 });
  });

  it('records the shortfall of an underpaid, expired order', async () => {
    const payment = samplePayment({ referenceId: 'order-under', status: 'EXPIRED', amountReceived: '10.00', remaining: '15.00', expiresAt: past() });
    await handle('underpaid', payment);
    expect(getOrder('order-under')).toMatchObject({ state: 'underpaid', shortfall: '15', shipments: 0 });
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

describe('POST /webhooks/checkout', () => {
  it('accepts a signed delivery, fulfils the order, and refuses a tampered one', async () => {
    const secret = newWebhookSecret();
    const config = loadConfig({ env: { CHECKOUT_WEBHOOK_SECRET: secret, CHECKOUT_STORE: 'memory:' }, dotenv: false });
    const app = await buildServer({ config, handlers: fulfillment, logger: silentLogger });
    try {
      const payment = samplePayment({ referenceId: 'order-webhook', status: 'PAID', amountReceived: '25.00', remaining: '0' });
      const delivery = signedWebhook({ event: sampleEvent('payment.paid', payment), secret });

      const accepted = await app.inject({ method: 'POST', url: '/webhooks/checkout', headers: delivery.headers, payload: delivery.body });
      expect(accepted.statusCode).toBe(200);
      await expect.poll(() => getOrder('order-webhook')?.state).toBe('paid');

      const tampered = await app.inject({ method: 'POST', url: '/webhooks/checkout', headers: delivery.headers, payload: delivery.body.replace('25.00', '2500.00') });
      expect(tampered.statusCode).toBe(401);
      expect(getOrder('order-webhook')?.shipments).toBe(1);
    } finally {
      await app.close();
    }
  });
});

import { loadConfig, silentLogger } from 'checkout-kit';
import { newWebhookSecret, sampleEvent, samplePayment, signedWebhook } from 'checkout-kit/testing';
import { describe, expect, it } from 'vitest';
import fulfillment from '../fulfillment.js';
import { getOrder } from '../src/orders.js';
import { buildServer } from '../src/server.js';

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

      const tampered = await app.inject({
        method: 'POST',
        url: '/webhooks/checkout',
        headers: delivery.headers,
        payload: delivery.body.replace('25.00', '2500.00'),
      });
      expect(tampered.statusCode).toBe(401);
      expect(getOrder('order-webhook')?.shipments).toBe(1);
    } finally {
      await app.close();
    }
  });
});

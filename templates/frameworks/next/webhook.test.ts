import { loadConfig, silentLogger } from 'checkout-kit';
import { newWebhookSecret, sampleEvent, samplePayment, signedWebhook } from 'checkout-kit/testing';
import { describe, expect, it } from 'vitest';
import { POST } from '../app/webhooks/checkout/route.js';
import fulfillment from '../fulfillment.js';
import { getOrder } from '../src/orders.js';
import { sharedShop } from '../src/shop.js';

describe('POST /webhooks/checkout (App Router route handler)', () => {
  it('accepts a signed delivery, fulfils the order, and refuses a tampered one', async () => {
    const secret = newWebhookSecret();
    const config = loadConfig({ env: { CHECKOUT_WEBHOOK_SECRET: secret, CHECKOUT_STORE: 'memory:' }, dotenv: false });
    const shop = await sharedShop({ config, handlers: fulfillment, logger: silentLogger });
    try {
      const payment = samplePayment({ referenceId: 'order-webhook', status: 'PAID', amountReceived: '25.00', remaining: '0' });
      const delivery = signedWebhook({ event: sampleEvent('payment.paid', payment), secret });
      const deliver = (body: string) => POST(new Request('http://localhost:3000/webhooks/checkout', { method: 'POST', headers: delivery.headers, body }));

      expect((await deliver(delivery.body)).status).toBe(200);
      await expect.poll(() => getOrder('order-webhook')?.state).toBe('paid');

      expect((await deliver(delivery.body.replace('25.00', '2500.00'))).status).toBe(401);
      expect(getOrder('order-webhook')?.shipments).toBe(1);
    } finally {
      await shop.close();
    }
  });
});

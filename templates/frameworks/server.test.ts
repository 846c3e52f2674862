import { loadConfig, silentLogger } from 'checkout-kit';
import { newWebhookSecret, sampleEvent, samplePayment, signedWebhook } from 'checkout-kit/testing';
import { describe, expect, it } from 'vitest';
import fulfillment from '../fulfillment.js';
import { getOrder } from '../src/orders.js';
import { startServer } from '../src/server.js';

describe('POST /webhooks/checkout', () => {
  it('accepts a signed delivery, fulfils the order, and refuses a tampered one', async () => {
    const secret = newWebhookSecret();
    const config = loadConfig({ env: { CHECKOUT_WEBHOOK_SECRET: secret, CHECKOUT_STORE: 'memory:' }, dotenv: false });
    // A real server on a free loopback port: the framework's own body handling is under test too.
    const server = await startServer({ config, handlers: fulfillment, logger: silentLogger, host: '127.0.0.1', port: 0 });
    try {
      const payment = samplePayment({ referenceId: 'order-webhook', status: 'PAID', amountReceived: '25.00', remaining: '0' });
      const delivery = signedWebhook({ event: sampleEvent('payment.paid', payment), secret });
      const deliver = (body: string) => fetch(`${server.url}/webhooks/checkout`, { method: 'POST', headers: delivery.headers, body });

      expect((await deliver(delivery.body)).status).toBe(200);
      await expect.poll(() => getOrder('order-webhook')?.state).toBe('paid');

      expect((await deliver(delivery.body.replace('25.00', '2500.00'))).status).toBe(401);
      expect(getOrder('order-webhook')?.shipments).toBe(1);
    } finally {
      await server.close();
    }
  });
});

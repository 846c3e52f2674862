import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { checkoutWebhooks } from '../../../src/webhooks/index.js';
import { countingReceiver, expectDeliveryFlow, post, storedIn } from '../receive/delivery-flow.js';

const apps: Array<{ close(): Promise<unknown> }> = [];
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
});

describe('fastify on a loopback port', () => {
  it('stores a signed multibyte delivery once, acknowledges the duplicate, refuses a tampered copy; JSON routes beside it still parse', async () => {
    const { store, receiver, dispatched } = countingReceiver();
    const app = Fastify();
    apps.push(app);
    app.post('/api/orders', async (request) => ({ parsed: request.body }));
    await app.register(checkoutWebhooks, { receiver });
    const base = await app.listen({ port: 0, host: '127.0.0.1' });

    await expectDeliveryFlow({ send: (body, headers) => post(`${base}/webhooks/checkout`, body, headers), stored: storedIn(store) });
    await receiver.idle();
    expect(dispatched).toEqual(['evt_multibyte_1']);

    const orders = await post(`${base}/api/orders`, '{"orderId":"o-1"}', { 'content-type': 'application/json' });
    expect(orders).toEqual({ status: 200, body: { parsed: { orderId: 'o-1' } } });
  });
});

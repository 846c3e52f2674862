import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express, { type Express } from 'express';
import { afterEach, describe, expect, it } from 'vitest';
import { createNodeHandler } from '../../../src/webhooks/index.js';
import { countingReceiver, expectDeliveryFlow, multibyteDelivery, post, storedIn } from '../receive/delivery-flow.js';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

async function listen(app: Express): Promise<string> {
  const server = await new Promise<Server>((resolve) => {
    const started: Server = app.listen(0, '127.0.0.1', () => resolve(started));
  });
  servers.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** The merchant's own JSON route: proves express.json() still works app-wide. */
const orders = (app: Express) => app.post('/api/orders', (request, response) => void response.json({ parsed: request.body as unknown }));

describe('Express 5 on a loopback port', () => {
  it('works with express.json() mounted app-wide, when the webhook route is mounted first', async () => {
    const { store, receiver, dispatched } = countingReceiver();
    const app = express();
    app.post('/webhooks/checkout', createNodeHandler(receiver));
    app.use(express.json());
    orders(app);
    const base = await listen(app);

    await expectDeliveryFlow({ send: (body, headers) => post(`${base}/webhooks/checkout`, body, headers), stored: storedIn(store) });
    await receiver.idle();
    expect(dispatched).toEqual(['evt_multibyte_1']);
    expect(await post(`${base}/api/orders`, '{"orderId":"o-1"}', { 'content-type': 'application/json' })).toEqual({
      status: 200,
      body: { parsed: { orderId: 'o-1' } },
    });
  });

  it('refuses with a clear error, storing nothing, when express.json() parsed the body first', async () => {
    const { store, receiver } = countingReceiver();
    const app = express();
    app.use(express.json());
    app.post('/webhooks/checkout', createNodeHandler(receiver));
    const base = await listen(app);

    const delivery = multibyteDelivery('evt_parsed_first');
    const answer = await post(`${base}/webhooks/checkout`, delivery.body, delivery.headers);
    expect(answer.status).toBe(500);
    const { error } = answer.body as { error: { code: string; message: string } };
    expect(error.code).toBe('raw_body_required');
    // What went wrong, and the fixes: express.raw only where it replaces express.json(), since an
    // app-wide parser runs first; a verify callback keeping the bytes works after any.
    expect(error.message).toContain('already parsed');
    expect(error.message).toContain('mount the webhook handler before express.json()');
    expect(error.message).toContain("express.raw({ type: 'application/json' }) instead of express.json()");
    expect(error.message).toContain('express.json({ verify: (req, _res, buf) => { req.rawBody = buf; } })');
    expect(await store.listEvents()).toHaveLength(0);
  });

  it('works after an app-wide express.json() whose verify callback keeps req.rawBody', async () => {
    const { store, receiver } = countingReceiver();
    const app = express();
    app.use(
      express.json({
        verify: (request, _response, buffer) => {
          (request as typeof request & { rawBody?: Buffer }).rawBody = buffer;
        },
      }),
    );
    app.post('/webhooks/checkout', createNodeHandler(receiver));
    const base = await listen(app);

    await expectDeliveryFlow({ send: (body, headers) => post(`${base}/webhooks/checkout`, body, headers), stored: storedIn(store) });
  });
});

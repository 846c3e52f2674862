import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { Hono } from 'hono';
import { afterEach, describe, expect, it } from 'vitest';
import { createWebHandler } from '../../../src/webhooks/index.js';
import { countingReceiver, expectDeliveryFlow, multibyteDelivery, post, storedIn } from '../receive/delivery-flow.js';

const servers: ServerType[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

async function listen(app: Hono): Promise<string> {
  const port = await new Promise<number>((resolve) => {
    servers.push(serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) => resolve(info.port)));
  });
  return `http://127.0.0.1:${port}/webhooks/checkout`;
}

describe('Hono on @hono/node-server, on a loopback port', () => {
  it('stores a signed multibyte delivery once, acknowledges the duplicate, refuses a tampered copy', async () => {
    const { store, receiver, dispatched } = countingReceiver();
    const handler = createWebHandler(receiver);
    const app = new Hono();
    app.post('/webhooks/checkout', (c) => handler(c.req.raw));
    const url = await listen(app);

    await expectDeliveryFlow({ send: (body, headers) => post(url, body, headers), stored: storedIn(store) });
    await receiver.idle();
    expect(dispatched).toEqual(['evt_multibyte_1']);
  });

  it('says so when a middleware read the body first', async () => {
    const { store, receiver } = countingReceiver();
    const handler = createWebHandler(receiver);
    const app = new Hono();
    app.use(async (c, next) => {
      await c.req.json();
      await next();
    });
    app.post('/webhooks/checkout', (c) => handler(c.req.raw));
    const url = await listen(app);

    const delivery = multibyteDelivery('evt_read_first');
    const answer = await post(url, delivery.body, delivery.headers);
    expect(answer.status).toBe(500);
    expect(answer.body).toMatchObject({ error: { code: 'raw_body_required', message: expect.stringContaining('untouched Request') } });
    expect(await store.listEvents()).toHaveLength(0);
  });
});

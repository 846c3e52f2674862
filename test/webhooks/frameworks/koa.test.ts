import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import Koa from 'koa';
import { afterEach, describe, expect, it } from 'vitest';
import { createKoaHandler } from '../../../src/webhooks/index.js';
import { countingReceiver, expectDeliveryFlow, post, storedIn } from '../receive/delivery-flow.js';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

describe('Koa with @koa/router on a loopback port', () => {
  it('stores a signed multibyte delivery once, acknowledges the duplicate, refuses a tampered copy', async () => {
    const { store, receiver, dispatched } = countingReceiver();
    const app = new Koa();
    const router = new Router();
    router.post('/webhooks/checkout', createKoaHandler(receiver));
    app.use(router.routes()).use(router.allowedMethods());
    const server = app.listen(0, '127.0.0.1');
    servers.push(server);
    await new Promise<void>((resolve) => server.once('listening', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/checkout`;

    await expectDeliveryFlow({ send: (body, headers) => post(url, body, headers), stored: storedIn(store) });
    await receiver.idle();
    expect(dispatched).toEqual(['evt_multibyte_1']);
  });
});

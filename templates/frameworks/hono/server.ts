/**
 * The shop's backend on Hono (Node server): a home page with an order form, the checkout routes and
 * the webhook receiver, all feeding one fulfillment engine (wired in ./shop.ts) that calls the
 * handlers in ../fulfillment.ts once per order outcome. Run it with `npm run dev` (tsx watch).
 */
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { createWebHandler, handleReturnRequest } from 'checkout-kit';
import { checkoutResponse, homePage, listenAddress, openShop, runWhenMain, toResponse, wantsJson, type Shop, type ShopOptions } from './shop.js';

/** Build the app (not listening yet). */
export async function buildServer(options: ShopOptions = {}): Promise<{ app: Hono; shop: Shop }> {
  const shop = await openShop(options);
  const app = new Hono();

  // The untouched Request: the signature covers its raw bytes (never call c.req.json() before this).
  const webhook = createWebHandler(shop.receiver);
  app.post('/webhooks/checkout', (c) => webhook(c.req.raw));

  app.get('/', (c) => c.html(homePage(randomUUID().slice(0, 8), shop.checkout !== undefined)));
  const checkout = shop.checkout;
  if (checkout) {
    // POST /checkout (JSON or form) → 303 to the service's checkoutUrl; GET /checkout/return confirms the order.
    app.post('/checkout', (c) => checkoutResponse(checkout, c.req.raw));
    app.get('/checkout/return', async (c) =>
      toResponse(await handleReturnRequest(checkout, c.req.query(), wantsJson(c.req.header('accept'), c.req.query('format')))),
    );
  }
  return { app, shop };
}

/** Listen on HOST:PORT (or the given ones; port 0 picks a free one). `close` stops the server, then the shop. */
export async function startServer(options: ShopOptions & { host?: string; port?: number } = {}) {
  const { app, shop } = await buildServer(options);
  const address = listenAddress(shop.config);
  const hostname = options.host ?? address.host;
  let server: ReturnType<typeof serve> | undefined;
  const port = await new Promise<number>((resolve) => {
    server = serve({ fetch: app.fetch, port: options.port ?? address.port, hostname }, (info: AddressInfo) => resolve(info.port));
  });
  return {
    url: `http://${hostname}:${port}`,
    async close() {
      await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
      await shop.close();
    },
  };
}

runWhenMain(import.meta.url, () => startServer());

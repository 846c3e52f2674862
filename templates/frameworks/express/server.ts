/**
 * The shop's backend on Express: a home page with an order form, the checkout routes and the webhook
 * receiver, all feeding one fulfillment engine (wired in ./shop.ts) that calls the handlers in
 * ../fulfillment.ts once per order outcome. Run it with `npm run dev` (tsx watch).
 */
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import express, { type Express, type Response } from 'express';
import { createNodeHandler, handleCheckoutRequest, handleReturnRequest, type HttpAnswer } from 'checkout-kit';
import { checkoutBodyErrors, homePage, listenAddress, openShop, runWhenMain, wantsJson, type Shop, type ShopOptions } from './shop.js';

function send(response: Response, answer: HttpAnswer): void {
  response.status(answer.status).set(answer.headers);
  if (answer.status === 303) response.end();
  else response.send(answer.body);
}

/** Build the app (not listening yet). */
export async function buildServer(options: ShopOptions = {}): Promise<{ app: Express; shop: Shop }> {
  const shop = await openShop(options);
  const app = express();

  // First, before express.json(): the signature covers the raw bytes, so this route reads them itself.
  app.post('/webhooks/checkout', createNodeHandler(shop.receiver));

  app.use(express.json(), express.urlencoded({ extended: false }));
  app.get('/', (_request, response) => void response.type('html').send(homePage(randomUUID().slice(0, 8), shop.checkout !== undefined)));
  const checkout = shop.checkout;
  if (checkout) {
    // POST /checkout → 303 to the service's checkoutUrl; GET /checkout/return confirms the order.
    app.post('/checkout', async (request, response) => send(response, await handleCheckoutRequest(checkout, request.body)));
    app.get('/checkout/return', async (request, response) =>
      send(response, await handleReturnRequest(checkout, request.query, wantsJson(request.headers.accept, request.query.format))),
    );
    // A body express.json() or express.urlencoded() could not read (bad JSON, too large) is the buyer's
    // mistake: its 4xx with the spec's error object, not Express's HTML error page.
    app.use('/checkout', checkoutBodyErrors);
  }
  return { app, shop };
}

/** Listen on HOST:PORT (or the given ones; port 0 picks a free one). `close` stops the server, then the shop. */
export async function startServer(options: ShopOptions & { host?: string; port?: number } = {}) {
  const { app, shop } = await buildServer(options);
  const address = listenAddress(shop.config);
  const server = app.listen(options.port ?? address.port, options.host ?? address.host);
  await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${options.host ?? address.host}:${port}`,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await shop.close();
    },
  };
}

runWhenMain(import.meta.url, () => startServer());

/**
 * The shop's backend on NestJS (Express platform): a home page with an order form, the checkout
 * routes and the webhook receiver, all feeding one fulfillment engine (wired in ./shop.ts) that calls
 * the handlers in ../fulfillment.ts once per order outcome. Run it with `npm run dev` (tsx watch).
 *
 * Two things matter for webhooks: the app keeps the raw body (`rawBody: true`), because Nest parses
 * JSON before any controller runs and the signature covers the raw bytes; and the shop is injected
 * by an explicit token (@Inject), so nothing depends on emitted decorator metadata (tsx does not emit it).
 */
import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Controller, Get, Inject, Module, Post, Req, Res, type DynamicModule } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { createNodeHandler, handleCheckoutRequest, handleReturnRequest, type HttpAnswer, type NodeWebhookHandler } from 'checkout-kit';
import { checkoutBodyErrors, homePage, listenAddress, openShop, runWhenMain, wantsJson, type Shop, type ShopOptions } from './shop.js';

const SHOP = 'CHECKOUT_SHOP';

type Request = IncomingMessage & { body?: unknown; query?: Record<string, unknown> };

function send(response: ServerResponse, answer: HttpAnswer): void {
  const html = typeof answer.body === 'string';
  const payload = answer.status === 303 ? '' : html ? (answer.body as string) : JSON.stringify(answer.body);
  response.writeHead(answer.status, answer.headers).end(payload);
}

@Controller()
class ShopController {
  private readonly webhook: NodeWebhookHandler;

  constructor(@Inject(SHOP) private readonly shop: Shop) {
    this.webhook = createNodeHandler(shop.receiver);
  }

  @Post('webhooks/checkout')
  async receive(@Req() request: Request, @Res() response: ServerResponse): Promise<void> {
    await this.webhook(request, response);
  }

  @Get()
  home(@Res() response: ServerResponse): void {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(homePage(randomUUID().slice(0, 8), this.shop.checkout !== undefined));
  }

  // POST /checkout → 303 to the service's checkoutUrl; GET /checkout/return confirms the order.
  @Post('checkout')
  async checkout(@Req() request: Request, @Res() response: ServerResponse): Promise<void> {
    if (!this.shop.checkout) return void response.writeHead(404).end();
    send(response, await handleCheckoutRequest(this.shop.checkout, request.body));
  }

  @Get('checkout/return')
  async confirm(@Req() request: Request, @Res() response: ServerResponse): Promise<void> {
    if (!this.shop.checkout) return void response.writeHead(404).end();
    const query = request.query ?? {};
    send(response, await handleReturnRequest(this.shop.checkout, query, wantsJson(request.headers.accept, query.format)));
  }
}

@Module({})
class ShopModule {
  static with(shop: Shop): DynamicModule {
    return { module: ShopModule, controllers: [ShopController], providers: [{ provide: SHOP, useValue: shop }] };
  }
}

/** Build the app (not listening yet). */
export async function buildServer(options: ShopOptions = {}) {
  const shop = await openShop(options);
  // rawBody: Nest's JSON parser keeps the bytes in req.rawBody, which the webhook handler verifies.
  // bodyParser false, then the same parsers here: Nest would add its own at listen, after any handler
  // of their errors, so a body they could not read would get Nest's error shape.
  const app = await NestFactory.create<NestExpressApplication>(ShopModule.with(shop), { rawBody: true, bodyParser: false, logger: ['error', 'warn'] });
  app.useBodyParser('json');
  app.useBodyParser('urlencoded', { extended: true });
  // A body they could not read (bad JSON, too large) is the buyer's mistake: its 4xx with the spec's error object.
  app.use('/checkout', checkoutBodyErrors);
  return { app, shop };
}

/** Listen on HOST:PORT (or the given ones; port 0 picks a free one). `close` stops the server, then the shop. */
export async function startServer(options: ShopOptions & { host?: string; port?: number } = {}) {
  const { app, shop } = await buildServer(options);
  const address = listenAddress(shop.config);
  await app.listen(options.port ?? address.port, options.host ?? address.host);
  return {
    url: await app.getUrl(),
    async close() {
      await app.close();
      await shop.close();
    },
  };
}

runWhenMain(import.meta.url, () => startServer());

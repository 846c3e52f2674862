/**
 * The shop's checkout-kit wiring, free of any web framework: the store, the fulfillment engine that
 * calls the handlers in ../fulfillment.ts once per order outcome, the webhook receiver feeding it,
 * and the checkout routes' options. src/server.ts (or the app/ route handlers, with Next.js) only
 * puts these on routes. Configuration comes from the environment and `.env` (see .env.example).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  ConfigError,
  clientFromConfig,
  FulfillmentEngine,
  attachFulfillment,
  createLogger,
  createReceiver,
  handleCheckoutRequest,
  loadConfig,
  loadHandlers,
  openStore,
  type CheckoutHttpOptions,
  type CheckoutKitConfig,
  type FulfillmentHandlers,
  type HttpAnswer,
  type Logger,
  type Store,
  type WebhookReceiver,
} from 'checkout-kit';

export interface ShopOptions {
  /** @default loadConfig() (the environment, then `.env`) */
  config?: CheckoutKitConfig;
  /** @default the module CHECKOUT_HANDLERS names, else ./fulfillment.ts (the one `checkout-kit reconcile` runs too) */
  handlers?: FulfillmentHandlers;
  /** The shop's public URL, for the buyer's success and cancel links. @default http://HOST:PORT */
  publicUrl?: string;
  logger?: Logger;
}

export interface Shop {
  config: CheckoutKitConfig;
  logger: Logger;
  store: Store;
  /** POST /webhooks/checkout: verify, store once, then let the engine decide (an event is only a hint). */
  receiver: WebhookReceiver;
  /** Options of POST /checkout and GET /checkout/return; undefined without the service's keys. */
  checkout: CheckoutHttpOptions | undefined;
  /** Stop retrying, let in-flight handlers finish, close the store. */
  close(): Promise<void>;
}

/** HOST and PORT. @default 127.0.0.1:3000 */
export function listenAddress(config: CheckoutKitConfig): { host: string; port: number } {
  return { host: config.host ?? '127.0.0.1', port: config.port ?? 3000 };
}

export async function openShop(options: ShopOptions = {}): Promise<Shop> {
  const config = options.config ?? loadConfig();
  const logger = options.logger ?? createLogger();
  if (config.webhookSecrets.length === 0) {
    throw new ConfigError(
      'CHECKOUT_WEBHOOK_SECRET is not set: start the sandbox with --write-env (npm run checkout:sandbox -- --write-env) to set it in .env, or set your own.',
    );
  }
  const handlers = options.handlers ?? (await loadHandlers(config.handlers));
  const store = await openStore(config.store);

  // Without keys the shop can still receive webhooks (then it trusts the verified event data).
  const client = clientFromConfig(config, logger);
  const engine = new FulfillmentEngine({ store, client, handlers, logger });
  const receiver = createReceiver({ store, secrets: config.webhookSecrets, scheme: config.webhookScheme, environment: config.environment, logger });
  // Webhooks feed the engine; the receiver's run loop also runs its handlers and their retries.
  attachFulfillment(receiver, engine);
  await receiver.start();

  const { host, port } = listenAddress(config);
  const checkout: CheckoutHttpOptions | undefined = client && {
    store,
    engine,
    creator: { client },
    redirect: { allowedHosts: config.redirectHosts, allowLoopbackHttp: config.environment === 'test' },
    publicUrl: options.publicUrl ?? config.publicUrl ?? `http://${host}:${port}`,
    logger,
  };

  return {
    config,
    logger,
    store,
    receiver,
    checkout,
    async close() {
      await receiver.stop();
      await store.close();
    },
  };
}

let shared: Promise<Shop> | undefined;

/**
 * One shop per server process, opened on first use (Next.js route handlers share it; opening it at
 * import time would run during `next build`). The first caller's options win.
 */
export function sharedShop(options?: ShopOptions): Promise<Shop> {
  shared ??= openShop(options).catch((error: unknown) => {
    shared = undefined;
    throw error;
  });
  return shared;
}

/** GET /checkout/return answers JSON when asked (Accept or ?format=json), a small page otherwise. */
export function wantsJson(accept: string | null | undefined, format: unknown): boolean {
  return (accept ?? '').includes('application/json') || format === 'json';
}

/** A checkout answer as a Web Response (Hono, Next.js). */
export function toResponse(answer: HttpAnswer): Response {
  const body = answer.status === 303 ? null : typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body);
  return new Response(body, { status: answer.status, headers: answer.headers });
}

/**
 * A POST /checkout body the framework could not read (bad JSON, too large, a charset it does not
 * know), with the framework's 4xx status and the spec's error object, as every other checkout answer
 * has: the buyer's mistake, never a 500 or the framework's own error page.
 */
export function unreadableBody(status = 400): HttpAnswer {
  const [code, message] =
    status === 413
      ? ['payload_too_large', 'The checkout request body is too large.']
      : status === 415
        ? ['unsupported_media_type', 'The checkout request body is in a media type or charset this shop does not read: send JSON or a form, in UTF-8.']
        : ['invalid_request', 'The checkout request body could not be read: send valid JSON (Content-Type: application/json) or a form.'];
  return { status, headers: { 'content-type': 'application/json; charset=utf-8' }, body: { error: { code, message } } };
}

/** The Express (and NestJS) error handler of POST /checkout: a body its parser could not read, as `unreadableBody`. */
export function checkoutBodyErrors(error: unknown, _request: IncomingMessage, response: ServerResponse, next: (error?: unknown) => void): void {
  const status = (error as { status?: unknown } | undefined)?.status;
  if (typeof status !== 'number' || status < 400 || status >= 500) return next(error);
  const answer = unreadableBody(status);
  response.writeHead(answer.status, answer.headers).end(JSON.stringify(answer.body));
}

/** POST /checkout from a Web Request (Hono, Next.js): JSON or a form → 303 to the service's checkoutUrl. */
export async function checkoutResponse(checkout: CheckoutHttpOptions, request: Request): Promise<Response> {
  let body: unknown;
  try {
    body = (request.headers.get('content-type') ?? '').includes('application/json')
      ? await request.json()
      : Object.fromEntries((await request.formData()).entries());
  } catch {
    return toResponse(unreadableBody());
  }
  return toResponse(await handleCheckoutRequest(checkout, body));
}

/** The shop's home page: one product, one order form posting to /checkout. */
export function homePage(orderId: string, canCheckout: boolean): string {
  const form = canCheckout
    ? `<form method="post" action="/checkout">
    <input type="hidden" name="orderId" value="order-${orderId}">
    <label>Amount (USD) <input name="amount" value="25.00" inputmode="decimal" required></label>
    <label>Email <input name="email" type="email" placeholder="you@example.com"></label>
    <button type="submit">Pay with crypto</button>
  </form>`
    : '<p>Checkout is off: set CHECKOUT_BASE_URL and CHECKOUT_API_KEY / CHECKOUT_SIGNING_SECRET in .env.</p>';
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Shop</title>
<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem}label{display:block;margin:.75rem 0}input{margin-left:.5rem}</style>
</head>
<body>
  <h1>Shop</h1>
  <p>One sturdy mug, paid in stablecoins.</p>
  ${form}
</body>
</html>`;
}

/** Run `start` when this file is the one node started (`tsx src/server.ts`), not when a test imports it; stop on SIGINT/SIGTERM. */
export function runWhenMain(moduleUrl: string, start: () => Promise<{ url: string; close(): Promise<void> }>): void {
  if (!process.argv[1] || resolve(process.argv[1]) !== fileURLToPath(moduleUrl)) return;
  start().then(
    (server) => {
      console.info(`shop listening on ${server.url}`);
      let closing = false;
      const shutdown = () => {
        if (closing) return;
        closing = true;
        server.close().then(
          () => process.exit(0),
          (error: Error) => {
            console.error(`shutdown failed: ${error.message}`);
            process.exit(1);
          },
        );
      };
      process.once('SIGINT', shutdown);
      process.once('SIGTERM', shutdown);
    },
    (error: Error) => {
      console.error(error.message);
      process.exit(1);
    },
  );
}

/**
 * The shop's backend: a home page with an order form, the checkout routes and the webhook receiver,
 * all feeding one fulfillment engine that calls the handlers in ../fulfillment.ts once per order
 * outcome, whether the news came by webhook, by the buyer's return, or by `checkout-kit reconcile`.
 *
 * Run it with `npm run dev` (tsx watch). Configuration comes from the environment and `.env`
 * (see .env.example).
 */
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import Fastify, { type FastifyInstance } from 'fastify';
import {
  ConfigError,
  clientFromConfig,
  FulfillmentEngine,
  attachFulfillment,
  createLogger,
  createReceiver,
  loadConfig,
  loadHandlers,
  openStore,
  type CheckoutKitConfig,
  type FulfillmentHandlers,
  type Logger,
} from 'checkout-kit';
import { checkoutRoutes, checkoutWebhooks } from 'checkout-kit/fastify';

export interface ServerOptions {
  /** @default loadConfig() (the environment, then `.env`) */
  config?: CheckoutKitConfig;
  /** @default the module CHECKOUT_HANDLERS names, else ./fulfillment.ts (the one `checkout-kit reconcile` runs too) */
  handlers?: FulfillmentHandlers;
  /** The shop's public URL, for the buyer's success and cancel links. @default http://HOST:PORT */
  publicUrl?: string;
  logger?: Logger;
}

/** Build the app (not listening yet). Closing the app stops the receiver and closes the store. */
export async function buildServer(options: ServerOptions = {}): Promise<FastifyInstance> {
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

  // POST /webhooks/checkout: verify, store once, then let the engine decide (an event is only a hint).
  const receiver = createReceiver({ store, secrets: config.webhookSecrets, scheme: config.webhookScheme, environment: config.environment, logger });
  // Webhooks feed the engine; the receiver's run loop also runs its handlers and their retries.
  attachFulfillment(receiver, engine);

  const app = Fastify();
  await app.register(checkoutWebhooks, { receiver });
  if (client) {
    const { host, port } = listenAddress(config);
    // POST /checkout → 303 to the service's checkoutUrl; GET /checkout/return confirms the order.
    await app.register(checkoutRoutes, {
      store,
      engine,
      creator: { client },
      redirect: { allowedHosts: config.redirectHosts, allowLoopbackHttp: config.environment === 'test' },
      publicUrl: options.publicUrl ?? config.publicUrl ?? `http://${host}:${port}`,
      logger,
    });
  }

  app.get('/', async (_request, reply) => reply.type('text/html; charset=utf-8').send(homePage(randomUUID().slice(0, 8), client !== undefined)));

  app.addHook('onClose', async () => {
    await store.close();
  });
  return app;
}

/** HOST and PORT. @default 127.0.0.1:3000 */
function listenAddress(config: CheckoutKitConfig): { host: string; port: number } {
  return { host: config.host ?? '127.0.0.1', port: config.port ?? 3000 };
}

/** The shop's home page: one product, one order form posting to /checkout. */
function homePage(orderId: string, canCheckout: boolean): string {
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

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger();
  const app = await buildServer({ config, logger });
  const address = await app.listen(listenAddress(config));
  logger.info({ address }, `shop listening on ${address}`);

  // Graceful shutdown: stop taking requests, let in-flight handlers finish, close the store.
  let closing = false;
  const shutdown = (signal: NodeJS.Signals) => {
    if (closing) return;
    closing = true;
    logger.info({ signal }, 'shutting down');
    app.close().then(
      () => process.exit(0),
      (error: Error) => {
        logger.error({ error: error.message }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
}

// Started directly (`tsx src/server.ts`), not imported (by the tests).
if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((error: Error) => {
    console.error(error.message);
    process.exit(1);
  });
}

/**
 * A partner platform's backend: one deployment for every tenant. Each tenant is onboarded once as a
 * merchant of the service (POST /tenants), its buyers check out with its tenantId (POST /checkout),
 * and one webhook route receives every tenant's events, all feeding one fulfillment engine that
 * calls the handlers in ../fulfillment.ts with ctx.tenantId.
 *
 * Only the partner's keys are needed (CHECKOUT_PARTNER_API_KEY, CHECKOUT_PARTNER_SIGNING_SECRET):
 * the service creates and reads each tenant's payments for the partner. Run it with `npm run dev`;
 * configuration comes from the environment and `.env` (see .env.example). `checkout-kit merchants
 * onboard|list|show` work on the same store.
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import Fastify, { type FastifyInstance } from 'fastify';
import {
  ConfigError,
  FulfillmentEngine,
  attachFulfillment,
  createLogger,
  createReceiver,
  loadConfig,
  loadHandlers,
  openStore,
  partnerFromConfig,
  type CheckoutKitConfig,
  type FulfillmentHandlers,
  type Logger,
} from 'checkout-kit';
import { checkoutRoutes, checkoutWebhooks, onboardingRoutes } from 'checkout-kit/fastify';

export interface ServerOptions {
  /** @default loadConfig() (the environment, then `.env`) */
  config?: CheckoutKitConfig;
  /** @default the module CHECKOUT_HANDLERS names, else ./fulfillment.ts */
  handlers?: FulfillmentHandlers;
  /** The platform's public URL, for the buyers' success and cancel links. @default http://HOST:PORT */
  publicUrl?: string;
  logger?: Logger;
}

/** Build the app (not listening yet). Closing the app stops the receiver and closes the store. */
export async function buildServer(options: ServerOptions = {}): Promise<FastifyInstance> {
  const config = options.config ?? loadConfig();
  const logger = options.logger ?? createLogger();
  if (config.webhookSecrets.length === 0) {
    throw new ConfigError('CHECKOUT_WEBHOOK_SECRET is not set: start the sandbox with --write-env to set it in .env, or set your own.');
  }
  const handlers = options.handlers ?? (await loadHandlers(config.handlers));
  const store = await openStore(config.store);

  // The partner's client creates each tenant's payments and reads them back (its rate limit shared by all).
  const partner = partnerFromConfig(config, logger);
  const engine = new FulfillmentEngine({ store, client: partner, handlers, logger });

  // POST /webhooks/checkout: every tenant's events. The engine reads each payment back: its merchant,
  // and so its tenant, come from that read, never from the event.
  const receiver = createReceiver({ store, secrets: config.webhookSecrets, scheme: config.webhookScheme, environment: config.environment, logger });
  attachFulfillment(receiver, engine);

  const app = Fastify();
  await app.register(checkoutWebhooks, { receiver });

  if (partner) {
    // POST /tenants { tenantId, name, email }: onboard a tenant. The service merchant is created at
    // most once per tenant, however often this is called. Put your own admin authentication in front of it.
    await app.register(onboardingRoutes, { store, partner, logger });

    // POST /checkout { tenantId, orderId, amount, email } → 303 to the service's checkoutUrl for that
    // tenant's merchant (404 for a tenant not onboarded); GET /checkout/return confirms the order.
    const { host, port } = listenAddress(config);
    await app.register(checkoutRoutes, {
      store,
      engine,
      creator: { partner },
      redirect: { allowedHosts: config.redirectHosts, allowLoopbackHttp: config.environment === 'test' },
      publicUrl: options.publicUrl ?? config.publicUrl ?? `http://${host}:${port}`,
      logger,
    });
  }

  app.addHook('onClose', async () => {
    await store.close();
  });
  return app;
}

/** HOST and PORT. @default 127.0.0.1:3000 */
function listenAddress(config: CheckoutKitConfig): { host: string; port: number } {
  return { host: config.host ?? '127.0.0.1', port: config.port ?? 3000 };
}

async function main(): Promise<void> {
  const config = loadConfig();
  const logger = createLogger();
  const app = await buildServer({ config, logger });
  const address = await app.listen(listenAddress(config));
  logger.info({ address }, `platform listening on ${address}`);

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

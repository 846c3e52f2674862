import { setMaxListeners } from 'node:events';
import type { FastifyInstance } from 'fastify';
import { checkoutRoutes } from '../checkout/index.js';
import { ConfigError } from '../errors/index.js';
import { attachFulfillment } from '../fulfillment/index.js';
import { observeDeliveries } from '../metrics/index.js';
import { tenantWebhookSecrets } from '../partner/index.js';
import { notFoundReply, SPEC_ERROR_OPTIONS, specErrorHandler } from '../fastify/error-replies.js';
import { loadFastify } from '../fastify/load-fastify.js';
import { createReceiver, checkoutWebhooks, type WebhookReceiver } from '../webhooks/index.js';
import { createOperations, type Operations } from './operations.js';
import type { Runtime } from './runtime.js';

export interface ServeAppOptions {
  /** The shop's public URL, for success/cancel links. @default http://HOST:PORT */
  publicUrl: string;
  /** Serve the operator console under `/checkout-kit` (`serve --console`). @default false */
  console?: boolean;
  /** How often verification failure counts are written for the console and alerts. @default 30000 */
  verificationFlushMs?: number;
}

/**
 * The `serve` app: `POST /webhooks/checkout` feeding the fulfillment engine, and the checkout
 * routes (`POST /checkout`, `GET /checkout/return`) when a client is configured.
 */
export async function buildServeApp(
  runtime: Runtime,
  options: ServeAppOptions,
): Promise<{ app: FastifyInstance; receiver: WebhookReceiver; operations: Operations }> {
  const { config, store, engine, client, partner, box, logger } = runtime;
  if (config.webhookSecrets.length === 0) throw new ConfigError('CHECKOUT_WEBHOOK_SECRET is not set: the receiver cannot verify deliveries without it.');
  // One clock for the receiver and the engine: leases and due times are compared across both.
  const receiver = createReceiver({
    store,
    secrets: config.webhookSecrets,
    scheme: config.webhookScheme,
    environment: config.environment,
    logger,
    clock: engine.clock,
    dispatchConcurrency: config.dispatchConcurrency,
    // A platform's tenants whose own webhook secrets it stores: their deliveries verify with them.
    merchantSecrets: partner && box ? tenantWebhookSecrets({ store, box }) : undefined,
  });
  attachFulfillment(receiver, engine);
  // Metrics, health, alerts and (with --console) the console: they watch every delivery.
  const operations = createOperations(runtime, {
    console: options.console ?? false,
    alerts: true,
    publicUrl: options.publicUrl,
    handlersLoaded: true,
    verificationFlushMs: options.verificationFlushMs,
  });
  // Every error answers with the spec's error object: unknown routes, fastify's own (bad JSON,
  // media type, size: `POST /checkout`), and those before any route (a URL that does not decode).
  const Fastify = await loadFastify('checkout-kit serve');
  const app = Fastify({ ...SPEC_ERROR_OPTIONS });
  app.setNotFoundHandler(notFoundReply());
  app.setErrorHandler(specErrorHandler(logger, 'serve'));
  await app.register(checkoutWebhooks, { receiver: observeDeliveries(receiver, operations.observeDelivery) });
  // Aborted as close begins (preClose, below): the buyer's routes stop waiting on the service.
  const closing = new AbortController();
  // Every checkout waiting for the rate limiter listens to it: no listener-leak warning for it.
  setMaxListeners(0, closing.signal);
  // A partner platform creates each checkout for the merchant of the order's tenant.
  const creator = client ? { client } : partner ? { partner } : undefined;
  if (creator) {
    await app.register(checkoutRoutes, {
      signal: closing.signal,
      store,
      engine,
      creator,
      redirect: { allowedHosts: config.redirectHosts, allowLoopbackHttp: config.environment === 'test' },
      publicUrl: options.publicUrl,
      logger,
    });
  }
  await operations.register(app);

  // As close() begins: the receiver's run loop gives up reads waiting on the service and waits for
  // a handler running (the store closes after onClose, and a handler that returned into a closed
  // store would be called again once its lease ran out); keep-alive connections close after their
  // answer, or a sender's connection kept open would hold the close for fastify's 72 s keep-alive.
  app.addHook('preClose', async () => {
    closing.abort(new Error('the server is closing'));
    await receiver.stop?.();
  });
  app.addHook('onSend', async (_request, reply) => {
    if (closing.signal.aborted) reply.header('connection', 'close');
  });
  return { app, receiver, operations };
}

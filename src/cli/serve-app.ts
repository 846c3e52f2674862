import Fastify, { type FastifyInstance } from 'fastify';
import { checkoutRoutes } from '../checkout/index.js';
import { ConfigError } from '../errors/index.js';
import { attachFulfillment } from '../fulfillment/index.js';
import { createReceiver, checkoutWebhooks, type WebhookReceiver } from '../webhooks/index.js';
import type { Runtime } from './runtime.js';

export interface ServeAppOptions {
  /** The shop's public URL, for success/cancel links. @default http://HOST:PORT */
  publicUrl: string;
  /** How often due fulfillment runs (retries, crashed workers) are picked up. @default 5000 */
  runDueEveryMs?: number;
}

/**
 * The `serve` app: `POST /webhooks/checkout` feeding the fulfillment engine, and the checkout
 * routes (`POST /checkout`, `GET /checkout/return`) when a client is configured.
 */
export async function buildServeApp(runtime: Runtime, options: ServeAppOptions): Promise<{ app: FastifyInstance; receiver: WebhookReceiver }> {
  const { config, store, engine, client, logger } = runtime;
  if (config.webhookSecrets.length === 0) throw new ConfigError('CHECKOUT_WEBHOOK_SECRET is not set: the receiver cannot verify deliveries without it.');
  // One clock for the receiver and the engine: leases and due times are compared across both.
  const receiver = createReceiver({ store, secrets: config.webhookSecrets, scheme: config.webhookScheme, environment: config.environment, logger, clock: engine.clock, dispatchConcurrency: config.dispatchConcurrency });
  attachFulfillment(receiver, engine);
  const app = Fastify();
  await app.register(checkoutWebhooks, { receiver });
  if (client) {
    await app.register(checkoutRoutes, {
      store,
      engine,
      creator: { client },
      redirect: { allowedHosts: config.redirectHosts, allowLoopbackHttp: config.environment === 'test' },
      publicUrl: options.publicUrl,
      logger,
    });
  }
  app.get('/healthz', async () => ({ ok: true }));

  const stopDueRuns = engine.startDueRuns(options.runDueEveryMs);
  // Waits for a sweep in progress: the store closes after this hook, and a handler that returned
  // into a closed store would be called again once its lease ran out.
  app.addHook('onClose', async () => stopDueRuns());
  return { app, receiver };
}

/**
 * `checkout-kit/fastify`: the fastify plugins. Each registers in its own encapsulated context, so
 * its body parsers and hooks stay off the rest of the app. `fastify` is a peer dependency: these
 * plugins run on the application's own fastify. Importing this entry loads no fastify code (their
 * form parser is imported when they are registered).
 * @example
 * import { checkoutRoutes, checkoutWebhooks } from 'checkout-kit/fastify';
 * await app.register(checkoutWebhooks, { receiver });
 * @module checkout-kit/fastify
 */
export { checkoutWebhooks } from '../webhooks/adapters/fastify.js';
export type { CheckoutWebhooksOptions } from '../webhooks/adapters/fastify.js';
export { checkoutRoutes } from '../checkout/adapters/fastify.js';
export type { CheckoutRoutesOptions } from '../checkout/adapters/fastify.js';
export { onboardingRoutes } from '../partner/fastify.js';
export type { OnboardingRoutesOptions } from '../partner/fastify.js';
export { checkoutConsole } from '../console/fastify.js';
export type { ConsoleOptions } from '../console/context.js';
export { metricsRoute } from '../metrics/fastify.js';
export type { MetricsRouteOptions } from '../metrics/fastify.js';
export { healthRoutes } from '../health/fastify.js';

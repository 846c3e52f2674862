import type { FastifyPluginAsync } from 'fastify';
import { accessHook } from '../access/index.js';
import type { CheckoutMetrics } from './create-metrics.js';

/** The metrics to serve, where, and who may read them. */
export interface MetricsRouteOptions {
  metrics: CheckoutMetrics;
  /** `CHECKOUT_CONSOLE_TOKEN`: when set, required of every scraper (this machine's too); unset, only this machine may scrape. */
  token: string | undefined;
  /** @default '/metrics' */
  path?: string;
}

/** `GET /metrics` in the Prometheus text format, under the console's access rule. */
export const metricsRoute: FastifyPluginAsync<MetricsRouteOptions> = async (app, options) => {
  await app.register(async (scope) => {
    scope.addHook('onRequest', accessHook(options.token));
    scope.get(options.path ?? '/metrics', async (_request, reply) =>
      reply
        .type(options.metrics.contentType)
        .header('cache-control', 'no-store')
        .send(await options.metrics.render()),
    );
  });
};

import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { specErrorHandler } from '../fastify/error-replies.js';
import { acceptStrictBodies } from '../fastify/strict-bodies.js';
import type { Logger } from '../log/index.js';
import { handleOnboardRequest } from './http.js';
import type { OnboardDeps } from './onboard-merchant.js';

/** The `onboardingRoutes` plugin's options: `onboardMerchant`'s, and where the route lives. */
export interface OnboardingRoutesOptions extends OnboardDeps {
  /**
   * How long `POST /tenants` waits for the service, retries and `Retry-After` included, before it
   * answers 503 `service_unreachable` (asking again gets the one merchant). @default 20000
   */
  timeoutMs?: number | undefined;
  /** @default '/tenants' */
  path?: string;
}

/**
 * A fastify route that onboards a partner's tenant: `POST /tenants` `{ tenantId, name, email }` →
 * 201 (created now) or 200 (already) with `{ tenantId, merchantId, environment }`; every failure is
 * the spec's error object (a bad body 400, the service down 503, its refusal 502). The service
 * merchant is created at most once per tenant, however often this is called. Put your own admin
 * authentication in front of it.
 * @example
 * await app.register(onboardingRoutes, { store, partner });
 */
export const onboardingRoutes: FastifyPluginAsync<OnboardingRoutesOptions> = async (app: FastifyInstance, options) => {
  await app.register(async (scope) => {
    // JSON only, decoded strictly: two tenant ids that differ in invalid bytes are not one tenant.
    acceptStrictBodies(scope);
    scope.setErrorHandler(specErrorHandler(options.logger ?? (scope.log as Logger), 'onboarding'));
    scope.post(options.path ?? '/tenants', async (request, reply) => {
      const answer = await handleOnboardRequest({ ...options, logger: options.logger ?? request.log }, request.body);
      return reply.code(answer.status).headers(answer.headers).send(answer.body);
    });
  });
};

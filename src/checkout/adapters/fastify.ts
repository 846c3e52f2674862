import type { FastifyInstance, FastifyPluginAsync, FastifyReply } from 'fastify';
import { specErrorHandler } from '../../fastify/error-replies.js';
import { acceptStrictBodies } from '../../fastify/strict-bodies.js';
import type { Logger } from '../../log/index.js';
import { handleCheckoutRequest, handleReturnRequest, type CheckoutHttpOptions, type HttpAnswer } from '../http.js';

/** The `checkoutRoutes` plugin's options: the checkout helper's, and where its two routes live. */
export interface CheckoutRoutesOptions extends CheckoutHttpOptions {
  /** @default '/checkout' */
  checkoutPath?: string;
}

function send(reply: FastifyReply, answer: HttpAnswer) {
  reply.code(answer.status).headers(answer.headers);
  return answer.status === 303 ? reply.send() : reply.send(answer.body);
}

/**
 * Fastify routes: `POST /checkout` (JSON or form) → 303 to the checked `checkoutUrl`, and
 * `GET /checkout/return?orderId=…` → the order's confirmed state (JSON when asked).
 * Registered in their own context: the form parser does not leak into the rest of the app.
 * @example
 * await app.register(checkoutRoutes, { store, engine, creator: { client }, redirect: { allowedHosts }, publicUrl });
 */
export const checkoutRoutes: FastifyPluginAsync<CheckoutRoutesOptions> = async (app: FastifyInstance, options) => {
  await app.register(async (scope) => {
    // JSON and forms only (text/plain, which fastify parses by default, is a 415), decoded strictly.
    acceptStrictBodies(scope, { form: true });
    // Errors on these routes (bad JSON, a media type, a body too large) answer with the spec's error
    // object in any app they are registered in, not only in serve, whose root handler does the same.
    scope.setErrorHandler(specErrorHandler(options.logger ?? (scope.log as Logger), 'checkout'));
    const checkoutPath = options.checkoutPath ?? '/checkout';
    const returnPath = options.returnPath ?? `${checkoutPath}/return`;
    scope.post(checkoutPath, async (request, reply) =>
      send(reply, await handleCheckoutRequest({ ...options, returnPath, logger: options.logger ?? request.log }, request.body)),
    );
    scope.get(returnPath, async (request, reply) => {
      const wantsJson = (request.headers.accept ?? '').includes('application/json') || (request.query as { format?: string }).format === 'json';
      return send(reply, await handleReturnRequest({ ...options, logger: options.logger ?? request.log }, request.query as { orderId?: unknown }, wantsJson));
    });
  });
};

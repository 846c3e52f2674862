import type { FastifyInstance, FastifyPluginAsync, FastifyReply } from 'fastify';
import { formBody } from '../../fastify/form-body.js';
import { handleCheckoutRequest, handleReturnRequest, type CheckoutHttpOptions, type HttpAnswer } from '../http.js';

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
    await scope.register(await formBody());
    const checkoutPath = options.checkoutPath ?? '/checkout';
    const returnPath = options.returnPath ?? `${checkoutPath}/return`;
    scope.post(checkoutPath, async (request, reply) => send(reply, await handleCheckoutRequest({ ...options, returnPath, logger: options.logger ?? request.log }, request.body)));
    scope.get(returnPath, async (request, reply) => {
      const wantsJson = (request.headers.accept ?? '').includes('application/json') || (request.query as { format?: string }).format === 'json';
      return send(reply, await handleReturnRequest({ ...options, logger: options.logger ?? request.log }, request.query as { orderId?: unknown }, wantsJson));
    });
  });
};

import type { FastifyReply, FastifyRequest } from 'fastify';
import { errorObject } from '../schemas/error.js';
import { decideAccess } from './access.js';

/**
 * A fastify `onRequest` hook applying `decideAccess`: refused requests get 401 with the spec's
 * error object (and `WWW-Authenticate`), before any route reads the store.
 */
export function accessHook(token: string | undefined) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    const decision = decideAccess({ remoteAddress: request.raw.socket.remoteAddress, headers: request.headers }, token);
    if (decision.ok) return;
    await reply
      .code(401)
      .header('www-authenticate', 'Bearer realm="checkout-kit"')
      .header('cache-control', 'no-store')
      .send(errorObject('unauthorized', decision.message));
  };
}

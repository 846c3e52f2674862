import Fastify, { type FastifyError, type FastifyInstance } from 'fastify';
import { errorObject } from '../schemas/index.js';
import { SPEC_ERROR_OPTIONS } from '../fastify/error-replies.js';
import { installBodyParsers } from './body.js';
import type { SandboxContext } from './context.js';
import { SandboxHttpError } from './http-error.js';
import { registerCheckoutRoutes } from './routes/checkout.js';
import { registerInvoiceRoutes } from './routes/invoices.js';
import { registerPartnerRoutes } from './routes/partner.js';
import { registerPaymentRoutes } from './routes/payments.js';
import { registerSimulationRoutes } from './routes/simulate.js';

/** Largest request body accepted (413 beyond it). */
export const BODY_LIMIT = 64 * 1024;

/**
 * The sandbox's fastify app. Every error, including unknown routes and fastify's own (bad content
 * length, body too large), answers with the spec's error object `{ error: { code, message } }`.
 */
export function buildServer(context: SandboxContext): FastifyInstance {
  const app = Fastify({ logger: false, bodyLimit: BODY_LIMIT, forceCloseConnections: true, return503OnClosing: false, ...SPEC_ERROR_OPTIONS });
  installBodyParsers(app);

  app.setErrorHandler((error: FastifyError | SandboxHttpError, request, reply) => {
    if (error instanceof SandboxHttpError) return reply.code(error.status).send(error.body);
    const status = error.statusCode ?? 500;
    if (status === 413) return reply.code(413).send(errorObject('payload_too_large', `The request body is larger than ${BODY_LIMIT} bytes.`));
    if (status >= 400 && status < 500) return reply.code(400).send(errorObject('invalid_request', error.message));
    context.options.logger.error({ error: error.message, stack: error.stack, method: request.method, url: request.url }, 'sandbox internal error');
    return reply.code(500).send(errorObject('internal_error', 'The sandbox failed to handle this request; see its log.'));
  });
  app.setNotFoundHandler((request, reply) => {
    reply.code(404).send(errorObject('not_found', `No route ${request.method} ${request.url.split('?')[0]}.`));
  });

  registerPartnerRoutes(app, context);
  registerPaymentRoutes(app, context);
  registerInvoiceRoutes(app, context);
  registerSimulationRoutes(app, context);
  registerCheckoutRoutes(app, context);
  return app;
}

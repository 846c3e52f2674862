import type { FastifyError, FastifyPluginAsync, FastifyReply } from 'fastify';
import { errorObject } from '../../schemas/error.js';
import { webhookError, type WebhookResult } from '../receive/responses.js';
import { methodNotAllowed } from './body-limit.js';
import type { WebhookEndpoint } from '../receive/receiver.js';

/** The `checkoutWebhooks` plugin's options: the receiver and the route's path. */
export interface CheckoutWebhooksOptions {
  /** A receiver from `createReceiver` (or anything with `handle` and `maxBodyBytes`). */
  receiver: WebhookEndpoint;
  /** @default '/webhooks/checkout' */
  path?: string;
  /** Call `receiver.start()` when fastify is ready and `receiver.stop()` when it closes. @default true */
  lifecycle?: boolean;
}

function sendResult(reply: FastifyReply, result: WebhookResult): FastifyReply {
  reply.code(result.status);
  if (result.headers) reply.headers(result.headers);
  return reply.send(result.body);
}

/**
 * The receiver's route as a fastify plugin. It is deliberately not wrapped with fastify-plugin: the
 * raw-body content-type parser lives in this plugin's own encapsulated context, so the app's JSON
 * parser keeps working on every other route.
 * @example
 * await app.register(checkoutWebhooks, { receiver });
 */
export const checkoutWebhooks: FastifyPluginAsync<CheckoutWebhooksOptions> = async (instance, options) => {
  const { receiver } = options;
  instance.removeAllContentTypeParsers();
  // Any media type arrives as bytes; the core answers 415 itself, with the spec's error object.
  const asBytes = (_request: unknown, body: Buffer | string, done: (error: null, body: Buffer | string) => void) => done(null, body);
  // JSON by exact match first: fastify's catch-all parser is the slow path, kept for the rest.
  instance.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit: receiver.maxBodyBytes }, asBytes);
  instance.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: receiver.maxBodyBytes }, asBytes);

  instance.setErrorHandler((error: FastifyError, request, reply) => {
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      return sendResult(
        reply,
        webhookError('payload_too_large', `Webhook body is larger than the limit of ${receiver.maxBodyBytes} bytes (receiver option maxBodyBytes).`),
      );
    }
    if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      // A Content-Type fastify cannot parse (`a`, `application/`) never reaches the receiver: the same 415 it would give.
      const contentType = String(request.headers['content-type']).slice(0, 100);
      return sendResult(reply, webhookError('unsupported_media_type', `Webhook content type must be application/json, got "${contentType}".`));
    }
    request.log.error({ err: error }, 'Webhook route failed');
    const status = error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
    return reply.code(status).send(errorObject(status === 500 ? 'internal_error' : 'invalid_request', error.message));
  });

  const path = options.path ?? '/webhooks/checkout';
  instance.post(path, async (request, reply) => {
    const result = await receiver.handle({ headers: request.headers, body: request.body });
    return sendResult(reply, result);
  });
  // Any other method on the route is a 405 naming POST (HEAD too, through GET), as in the Node and Web handlers.
  instance.route({
    method: ['GET', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
    url: path,
    handler: async (request, reply) => sendResult(reply, methodNotAllowed(request.method)),
  });

  if (options.lifecycle ?? true) {
    if (receiver.start) {
      const start = receiver.start.bind(receiver);
      instance.addHook('onReady', async () => {
        await start();
      });
    }
    if (receiver.stop) {
      const stop = receiver.stop.bind(receiver);
      // Stopped as close() begins, not after every connection has closed (onClose): the server
      // waits for requests in flight, and dispatches waiting on the service must not wait with it.
      instance.addHook('preClose', async () => stop());
      // Again (stop() is idempotent) for a close before the app was ready, which runs no preClose.
      instance.addHook('onClose', async () => stop());
    }
  }
};

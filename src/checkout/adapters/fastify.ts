import { parse as parseQuery } from 'node:querystring';
import type { FastifyInstance, FastifyPluginAsync, FastifyReply } from 'fastify';
import { specErrorHandler } from '../../fastify/error-replies.js';
import type { Logger } from '../../log/index.js';
import { utf8Text } from '../../webhooks/verify/utf8.js';
import { handleCheckoutRequest, handleReturnRequest, type CheckoutHttpOptions, type HttpAnswer } from '../http.js';

/** The `checkoutRoutes` plugin's options: the checkout helper's, and where its two routes live. */
export interface CheckoutRoutesOptions extends CheckoutHttpOptions {
  /** @default '/checkout' */
  checkoutPath?: string;
}

/** A body that is not UTF-8, as fastify's parsers report a client's mistake (a 400). */
const notUtf8 = () => Object.assign(new Error('The request body is not valid UTF-8'), { statusCode: 400 });

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
    // Bodies decoded strictly: a lenient decoder turns every invalid UTF-8 sequence into U+FFFD, so
    // two different byte strings could name the same order (and be given its payment). These
    // parsers replace, in this scope only, any the application set for the two media types.
    // Only these two: any other body (text/plain included, which fastify parses by default) is a 415.
    scope.removeAllContentTypeParsers();
    const parseJson = scope.getDefaultJsonParser(scope.initialConfig.onProtoPoisoning ?? 'error', scope.initialConfig.onConstructorPoisoning ?? 'error');
    scope.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
      const text = utf8Text(body as Buffer);
      if (text === undefined) return done(notUtf8(), undefined);
      return parseJson(request, text, done);
    });
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'buffer' }, (_request, body, done) => {
      const text = utf8Text(body as Buffer);
      const form = text === undefined ? undefined : parseQuery(text);
      // A %-escape that is not UTF-8 decodes to U+FFFD too: refuse that as well.
      if (form === undefined || (!text!.includes('\uFFFD') && JSON.stringify(form).includes('\uFFFD'))) return done(notUtf8(), undefined);
      return done(null, form);
    });
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

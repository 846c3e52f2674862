import { WebhookVerificationError } from '../../errors/index.js';

/**
 * The raw body as the verifier needs it: bytes (a Buffer is a Uint8Array; no copy) or the exact
 * string. A parsed object cannot be verified: signatures cover bytes, and re-serialising JSON
 * changes them. No `Buffer` here: the WebCrypto path (checkout-kit/web) runs this too.
 */
export function rawBody(body: unknown): Uint8Array | string {
  if (typeof body === 'string' || body instanceof Uint8Array) return body;
  // A typed array of another realm (a vm context, a worker's message) fails instanceof.
  if (ArrayBuffer.isView(body)) return new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
  if (body === undefined || body === null) return new Uint8Array(0);
  throw new WebhookVerificationError(
    'parsed_body',
    `The webhook body arrived already parsed (${Array.isArray(body) ? 'an array' : `a ${typeof body}`}), but the signature covers the raw bytes, ` +
      'so verification needs the raw body. With Express, mount the webhook handler before express.json() (or give its route ' +
      "express.raw({ type: 'application/json' }) instead of express.json()), or keep the bytes with " +
      'express.json({ verify: (req, _res, buf) => { req.rawBody = buf; } }); with Koa, route it before any body parser; with NestJS, create the app with ' +
      'NestFactory.create(AppModule, { rawBody: true }); with fastify, register the checkoutWebhooks plugin (it reads the raw body on its own route).',
  );
}

import { WebhookVerificationError } from '../errors/index.js';

/**
 * The raw body as the verifier needs it: a Buffer (no copy for a Uint8Array) or the exact string.
 * A parsed object cannot be verified: signatures cover bytes, and re-serialising JSON changes them.
 */
export function rawBody(body: unknown): Buffer | string {
  if (Buffer.isBuffer(body) || typeof body === 'string') return body;
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  if (body === undefined || body === null) return Buffer.alloc(0);
  throw new WebhookVerificationError(
    'parsed_body',
    `The webhook body arrived already parsed (${Array.isArray(body) ? 'an array' : `a ${typeof body}`}), but the signature covers the raw bytes, ` +
      'so verification needs the raw body. With Express, mount the webhook handler before express.json(), or give its route ' +
      "express.raw({ type: 'application/json' }); with fastify, register the checkoutWebhooks plugin (it reads the raw body on its own route).",
  );
}

import type { WebhookEndpoint } from '../receive/receiver.js';
import { webhookError, type WebhookResult } from '../receive/responses.js';
import { declaredTooLarge, methodNotAllowed, tooLarge } from './body-limit.js';

/** The chunks as one array. Always a copy: the result belongs to this realm (see `rawBody`). */
function concat(chunks: readonly Uint8Array[], size: number): Uint8Array {
  const out = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return out;
}

/** Read a Web stream, cancelling it once `limit` is passed. No `Buffer`: this adapter runs on edge runtimes too. */
async function readBody(stream: ReadableStream<Uint8Array>, limit: number): Promise<Uint8Array | 'too_large'> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return concat(chunks, size);
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      return 'too_large';
    }
    chunks.push(value);
  }
}

async function respond(receiver: WebhookEndpoint, request: Request): Promise<WebhookResult> {
  if (request.method !== 'POST') return methodNotAllowed(request.method);
  if (request.bodyUsed) {
    return webhookError(
      'raw_body_required',
      'The Request body was already read (request.json() or request.text() ran first), but the signature covers the raw bytes: pass the untouched Request to the webhook handler.',
    );
  }
  if (declaredTooLarge(request.headers.get('content-length'), receiver.maxBodyBytes)) return tooLarge(receiver.maxBodyBytes);
  const body = request.body ? await readBody(request.body, receiver.maxBodyBytes) : new Uint8Array(0);
  if (body === 'too_large') return tooLarge(receiver.maxBodyBytes);
  return receiver.handle({ headers: request.headers, body });
}

/**
 * The receiver as a Web `Request -> Response` handler: Next.js route handlers, Hono, Bun, Deno,
 * Cloudflare Workers. Give it `createReceiver(…)` (Node, Bun, Deno) or `createWebReceiver(…)` from
 * `checkout-kit/web` (any runtime with WebCrypto, no Node built-ins needed).
 * @example
 * // app/webhooks/checkout/route.ts (Next.js)
 * export const POST = createWebHandler(receiver);
 * // Hono
 * app.post('/webhooks/checkout', (c) => handler(c.req.raw));
 */
export function createWebHandler(receiver: WebhookEndpoint): (request: Request) => Promise<Response> {
  return async (request) => {
    let result: WebhookResult;
    try {
      result = await respond(receiver, request);
    } catch (error) {
      result = webhookError('internal_error', `Webhook could not be handled: ${String(error)}`);
    }
    return new Response(JSON.stringify(result.body), {
      status: result.status,
      headers: { 'content-type': 'application/json; charset=utf-8', ...result.headers },
    });
  };
}

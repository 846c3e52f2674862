import type { WebhookEndpoint } from '../receiver.js';
import { webhookError, type WebhookResult } from '../responses.js';
import { declaredTooLarge, methodNotAllowed, tooLarge } from './body-limit.js';

/** Read a Web stream, cancelling it once `limit` is passed. */
async function readBody(stream: ReadableStream<Uint8Array>, limit: number): Promise<Buffer | 'too_large'> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return Buffer.concat(chunks, size);
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
  const body = request.body ? await readBody(request.body, receiver.maxBodyBytes) : Buffer.alloc(0);
  if (body === 'too_large') return tooLarge(receiver.maxBodyBytes);
  return receiver.handle({ headers: request.headers, body });
}

/**
 * The receiver as a Web `Request -> Response` handler: Next.js route handlers, Hono, Bun, Deno.
 * @example
 * // app/webhooks/checkout/route.ts (Next.js)
 * export const POST = createWebHandler(receiver);
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

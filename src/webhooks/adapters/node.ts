import type { IncomingMessage, ServerResponse } from 'node:http';
import type { WebhookEndpoint } from '../receive/receiver.js';
import { webhookError, type WebhookResult } from '../receive/responses.js';
import { declaredTooLarge, methodNotAllowed, tooLarge } from './body-limit.js';

/**
 * A request as Node hands it over, with what frameworks add: `body` when a body parser ran
 * (Express), `rawBody` when it kept the bytes too (NestJS with `rawBody: true`, or a `verify`
 * callback of `express.json()` that stores them).
 */
export type NodeWebhookRequest = IncomingMessage & { body?: unknown; rawBody?: unknown };

/** `(req, res)` for `http.createServer`, `(req, res, next)` for Express and Connect. */
export type NodeWebhookHandler = (request: NodeWebhookRequest, response: ServerResponse, next?: (error?: unknown) => void) => Promise<void>;

/** Read the stream, stopping (and discarding the rest) once `limit` is passed. */
function readBody(request: IncomingMessage, limit: number): Promise<Buffer | 'too_large'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      request.off('data', onData);
      request.off('end', onEnd);
      request.off('error', onError);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= limit) return void chunks.push(chunk);
      cleanup();
      request.resume();
      resolve('too_large');
    };
    const onEnd = () => {
      cleanup();
      resolve(Buffer.concat(chunks, size));
    };
    const onError = (error: Error) => {
      cleanup();
      reject(error);
    };
    request.on('data', onData);
    request.on('end', onEnd);
    request.on('error', onError);
  });
}

function write(response: ServerResponse, result: WebhookResult): void {
  const payload = JSON.stringify(result.body);
  response.writeHead(result.status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(payload),
    ...result.headers,
  });
  response.end(payload);
}

/**
 * The receiver's answer to a Node request: from the stream, or from what a body parser kept.
 * `parsed` is what a framework's body parser left (Express: `req.body`; Koa: `ctx.request.body`).
 */
export async function nodeWebhookResult(receiver: WebhookEndpoint, request: NodeWebhookRequest, parsed: unknown = request.body): Promise<WebhookResult> {
  if (request.method !== 'POST') return methodNotAllowed(request.method);
  // body-parser 1 marks what it parsed with `_body`; an ended stream cannot be read again either.
  const consumed = request.readableEnded || (request as { _body?: unknown })._body === true;
  if (consumed) {
    // The parser kept the exact bytes beside the parsed object: verify those.
    if (request.rawBody instanceof Uint8Array) return receiver.handle({ headers: request.headers, body: request.rawBody });
    if (parsed === undefined) {
      return webhookError(
        'raw_body_required',
        'The request body was already read by another middleware and no raw body was kept, but the signature covers the raw bytes. ' +
          "Mount the webhook handler before body parsers (or give its route express.raw({ type: 'application/json' }) instead of them), or keep the bytes as req.rawBody (express.json({ verify: (req, _res, buf) => { req.rawBody = buf; } })).",
      );
    }
    // A Buffer (express.raw) or string (express.text) verifies; a parsed object gets raw_body_required.
    return receiver.handle({ headers: request.headers, body: parsed });
  }
  if (declaredTooLarge(request.headers['content-length'], receiver.maxBodyBytes)) return tooLarge(receiver.maxBodyBytes);
  const body = await readBody(request, receiver.maxBodyBytes);
  if (body === 'too_large') return tooLarge(receiver.maxBodyBytes);
  return receiver.handle({ headers: request.headers, body });
}

/**
 * The receiver as a Node `http` handler, usable as Express middleware and from a NestJS controller.
 * Mount it before `express.json()` (or give its route `express.raw({ type: 'application/json' })`);
 * with NestJS, create the app with `{ rawBody: true }`.
 * @example
 * http.createServer(createNodeHandler(receiver)).listen(3000);
 * app.post('/webhooks/checkout', createNodeHandler(receiver)); // Express, before app.use(express.json())
 */
export function createNodeHandler(receiver: WebhookEndpoint): NodeWebhookHandler {
  return async (request, response, next) => {
    let result: WebhookResult;
    try {
      result = await nodeWebhookResult(receiver, request);
    } catch (error) {
      if (next) return next(error);
      result = webhookError('internal_error', `Webhook could not be handled: ${String(error)}`);
    }
    write(response, result);
  };
}

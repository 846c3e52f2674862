import type { WebhookEndpoint } from '../receive/receiver.js';
import { nodeWebhookResult, type NodeWebhookRequest } from './node.js';

/** What the adapter touches of a Koa context: typed by shape, so the core never imports koa. */
export interface KoaWebhookContext {
  req: NodeWebhookRequest;
  /** `body` is set when a Koa body parser ran first (then the raw body is gone, and the answer says so). */
  request: { body?: unknown };
  status: number;
  body: unknown;
  /** Set response headers. */
  set(headers: Record<string, string>): void;
}

/**
 * The receiver as Koa middleware (with @koa/router or on its own). Route it before any body parser:
 * it reads the raw stream itself. Errors other than the receiver's own answers go to Koa's error handling.
 * @example
 * router.post('/webhooks/checkout', createKoaHandler(receiver));
 */
export function createKoaHandler(receiver: WebhookEndpoint): (ctx: KoaWebhookContext) => Promise<void> {
  return async (ctx) => {
    const result = await nodeWebhookResult(receiver, ctx.req, ctx.request.body);
    ctx.status = result.status;
    if (result.headers) ctx.set(result.headers);
    ctx.body = result.body;
  };
}

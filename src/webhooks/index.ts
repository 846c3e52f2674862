/**
 * The webhook receiver: verify the raw bytes (Standard Webhooks by default), store each event once,
 * durably, then dispatch to typed handlers with retries. The core is framework-free; the fastify,
 * Node `http` (Express, NestJS), Koa and Web `Request` (Next.js, Hono) adapters only move bytes in
 * and out of `receiver.handle`. `createWebReceiver` / `createWebVerifier` run without Node built-ins
 * (WebCrypto), for Cloudflare Workers and edge runtimes: `checkout-kit/web` exports them alone.
 */
export { createReceiver } from './receive/receiver.js';
export type { WebhookReceiver, WebhookEndpoint } from './receive/receiver.js';
export type { ReceiverOptions, RetentionOptions } from './receive/receiver-options.js';
export type { MerchantSecrets } from './receive/merchant-secrets.js';
export type { WebhookInput } from './receive/handle-delivery.js';
export { WEBHOOK_ERROR_STATUS } from './receive/responses.js';
export type { WebhookResult, WebhookAck, WebhookErrorCode } from './receive/responses.js';
export type { EventName, EventHandler, ErrorHandler } from './receive/event-handlers.js';
export { WebhookHandlerError } from './receive/handler-error.js';
export type { EnvelopeMapper } from './receive/parse-delivery.js';

export { createVerifier, verifyWebhook } from './verify/verify.js';
export type { VerifierOptions, VerifyInput, WebhookVerifier } from './verify/verify.js';
export { createWebVerifier, verifyWebhookWeb } from './verify/web-verify.js';
export type { AsyncWebhookVerifier } from './verify/web-verify.js';
export { createWebReceiver } from './receive/web-receiver.js';
export type { WebReceiverOptions } from './receive/web-receiver.js';
export type { EventSink } from './receive/handle-delivery.js';
export { signWebhook, generateTestHeaders, newWebhookSecret } from './verify/sign.js';
export type { SignWebhookOptions, TestHeadersOptions } from './verify/sign.js';
export type { WebhookScheme, VerifiedDelivery } from './schemes/scheme.js';
export type { StandardWebhooksScheme } from './schemes/standard-webhooks.js';
export type { StripeStyleScheme } from './schemes/stripe-style.js';
export type { PlainHmacScheme } from './schemes/plain-hmac.js';
export type { HeaderBag } from './verify/header-value.js';

export { checkoutWebhooks } from './adapters/fastify.js';
export type { CheckoutWebhooksOptions } from './adapters/fastify.js';
export { createNodeHandler } from './adapters/node.js';
export type { NodeWebhookHandler, NodeWebhookRequest } from './adapters/node.js';
export { createWebHandler } from './adapters/web.js';
export { createKoaHandler } from './adapters/koa.js';
export type { KoaWebhookContext } from './adapters/koa.js';

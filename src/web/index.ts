/**
 * `checkout-kit/web`: the webhook receiver for runtimes without Node built-ins (Cloudflare Workers,
 * Vercel / Next.js edge, Deno Deploy, Bun, browsers). Nothing here imports a `node:` module or uses
 * `Buffer` or `process`: HMAC runs on WebCrypto (`crypto.subtle`), so verification is async. The
 * test suite bundles this entry for a platform without Node and runs it on workerd, Deno, Bun and
 * a Node `vm` context stripped of Node's globals.
 * @module checkout-kit/web
 */
export { createWebHandler } from '../webhooks/adapters/web.js';
export { createWebReceiver } from '../webhooks/receive/web-receiver.js';
export type { WebReceiverOptions } from '../webhooks/receive/web-receiver.js';
export type { EventSink } from '../webhooks/receive/handle-delivery.js';
export { createWebVerifier, verifyWebhookWeb } from '../webhooks/verify/web-verify.js';
export type { AsyncWebhookVerifier } from '../webhooks/verify/web-verify.js';
export type { VerifierOptions, VerifyInput } from '../webhooks/verify/verifier-options.js';
export type { WebhookScheme, VerifiedDelivery } from '../webhooks/schemes/scheme.js';
export type { StandardWebhooksScheme } from '../webhooks/schemes/standard-webhooks.js';
export type { StripeStyleScheme } from '../webhooks/schemes/stripe-style.js';
export type { PlainHmacScheme } from '../webhooks/schemes/plain-hmac.js';
export type { WebhookEndpoint } from '../webhooks/receive/receiver.js';
export type { WebhookInput } from '../webhooks/receive/handle-delivery.js';
export type { WebhookResult, WebhookAck, WebhookErrorCode } from '../webhooks/receive/responses.js';
export type { HeaderBag } from '../webhooks/verify/header-value.js';
export { consoleLogger } from '../log/console-logger.js';
export type { Logger } from '../log/logger.js';
export { CheckoutKitError, ConfigError, WebhookVerificationError } from '../errors/index.js';
export type { WebhookVerificationReason } from '../errors/index.js';
export type { CheckoutEvent, Environment } from '../schemas/index.js';

/**
 * Signature schemes the receiver can verify. Standard Webhooks is the default (contract.md 3a);
 * the others exist for services that sign differently.
 */

/**
 * Standard Webhooks: headers `webhook-id`, `webhook-timestamp` (unix seconds) and `webhook-signature`
 * (space-separated `v1,<base64 HMAC-SHA256>` entries) over `<id>.<timestamp>.<raw body>`.
 * The key is the base64-decoded part of the `whsec_…` secret.
 */
export interface StandardWebhooksScheme {
  kind: 'standard-webhooks';
}

/**
 * Stripe-style: one header `t=<unix seconds>,v1=<hex HMAC-SHA256>[,v1=…]` over `<t>.<raw body>`.
 * As Stripe does, the key is the secret string itself (its UTF-8 bytes).
 * @example { kind: 'stripe-style', header: 'stripe-signature' }
 */
export interface StripeStyleScheme {
  kind: 'stripe-style';
  /** @default 'stripe-signature' */
  header?: string;
}

/**
 * A plain HMAC of the raw body in a named header (GitHub, Shopify and many others). There is no
 * timestamp, so no replay protection beyond event-id dedupe. The key is the secret's UTF-8 bytes.
 * @example { kind: 'hmac', header: 'x-hub-signature-256', prefix: 'sha256=' }
 */
export interface PlainHmacScheme {
  kind: 'hmac';
  /** Header carrying the signature (case-insensitive). */
  header: string;
  /** @default 'sha256' */
  algorithm?: 'sha256' | 'sha512';
  /** @default 'hex' */
  encoding?: 'hex' | 'base64';
  /** Text before the digest in the header, e.g. `sha256=`. @default '' */
  prefix?: string;
}

export type WebhookScheme = StandardWebhooksScheme | StripeStyleScheme | PlainHmacScheme;

export const DEFAULT_SCHEME: WebhookScheme = { kind: 'standard-webhooks' };

/** Reads one header by lower-case name; `undefined` when absent or empty. */
export type HeaderGetter = (name: string) => string | undefined;

/** What a verified delivery tells about itself. */
export interface VerifiedDelivery {
  /** The delivery id header (`webhook-id`), when the scheme has one. */
  id: string | undefined;
  /** The signed timestamp (unix seconds), when the scheme has one. */
  timestamp: number | undefined;
}

export interface SchemeVerifyContext {
  header: HeaderGetter;
  body: Buffer | string;
  keys: readonly Buffer[];
  nowSeconds: number;
  toleranceSeconds: number;
}

export interface SchemeSignInput {
  id: string;
  timestamp: number;
  body: Buffer | string;
  keys: readonly Buffer[];
}

/** One scheme's rules. Keys are decoded once (`key`), then reused for every delivery. */
export interface SchemeImplementation {
  /** Turn a configured secret into HMAC key bytes. Throws `ConfigError` for a malformed secret. */
  key(secret: string, index: number): Buffer;
  /** Throws `WebhookVerificationError`, or returns what the headers said. */
  verify(context: SchemeVerifyContext): VerifiedDelivery;
  /** The headers that make a delivery verify. */
  sign(input: SchemeSignInput): Record<string, string>;
}

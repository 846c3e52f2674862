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

/** What a scheme reads from a delivery's headers before any HMAC is computed. */
export interface SchemeHeaderContext {
  header: HeaderGetter;
  nowSeconds: number;
  toleranceSeconds: number;
}

/**
 * What a delivery's headers claim, once their syntax and timestamp passed: the text signed before
 * the raw body, and the signatures to compare with the HMAC of it.
 */
export interface SignatureClaim {
  /** Returned when a signature matches. */
  delivery: VerifiedDelivery;
  /** Signed before the raw body (`<id>.<timestamp>.` for Standard Webhooks). */
  prefix: string;
  /** The signatures given, normalised for comparison (hex lower-cased). */
  signatures: readonly string[];
  /** The message of the `bad_signature` error when none matches. */
  noMatch: string;
}

/**
 * One scheme's rules, free of any crypto library: the Node verifier (`node:crypto`, sync) and the
 * Web verifier (`crypto.subtle`, async) both compute `algorithm` over `prefix + body` and compare.
 */
export interface SchemeRules {
  algorithm: 'sha256' | 'sha512';
  encoding: 'hex' | 'base64';
  /** Turn a configured secret into HMAC key bytes. Throws `ConfigError` for a malformed secret. */
  key(secret: string, index: number): Uint8Array;
  /** Read and check the headers. Throws `WebhookVerificationError` (missing, malformed, outside the tolerance). */
  claim(context: SchemeHeaderContext): SignatureClaim;
  /** What a new delivery signs before its body. */
  signedPrefix(id: string, timestamp: number): string;
  /** The headers of a new delivery, given one digest per key (in the order of the keys). */
  headers(input: { id: string; timestamp: number; digests: readonly string[] }): Record<string, string>;
}

export interface SchemeVerifyContext extends SchemeHeaderContext {
  body: Uint8Array | string;
  keys: readonly Uint8Array[];
}

export interface SchemeSignInput {
  id: string;
  timestamp: number;
  body: Uint8Array | string;
  keys: readonly Uint8Array[];
}

/** One scheme with Node's crypto. Keys are decoded once (`key`), then reused for every delivery. */
export interface SchemeImplementation {
  /** Turn a configured secret into HMAC key bytes. Throws `ConfigError` for a malformed secret. */
  key(secret: string, index: number): Uint8Array;
  /** Throws `WebhookVerificationError`, or returns what the headers said. */
  verify(context: SchemeVerifyContext): VerifiedDelivery;
  /** The headers that make a delivery verify. */
  sign(input: SchemeSignInput): Record<string, string>;
}

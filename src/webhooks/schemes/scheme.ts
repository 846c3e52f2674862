import type { KeyDecoder } from './decode-secret.js';
import type { WebhookScheme } from './registry.js';
import type { SchemeHeaderContext, VerifiedDelivery } from './rules.js';

/**
 * What every signature scheme shares. Each scheme is one entry of `schemes/registry.ts` (its
 * configuration, key form, headers and rules); Standard Webhooks is the default,
 * the others exist for services that sign differently.
 */

export type { WebhookScheme, SchemeKind } from './registry.js';
export type { HeaderGetter, VerifiedDelivery, SchemeHeaderContext, SignatureClaim, SchemeRules, KeyedSchemeRules } from './rules.js';

export const DEFAULT_SCHEME: WebhookScheme = { kind: 'standard-webhooks' };

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
  key: KeyDecoder;
  /** Throws `WebhookVerificationError`, or returns what the headers said. */
  verify(context: SchemeVerifyContext): VerifiedDelivery;
  /** The headers that make a delivery verify. */
  sign(input: SchemeSignInput): Record<string, string>;
}

import type { KeyDecoder } from './decode-secret.js';

/**
 * The rules every signature scheme gives, free of any crypto library: what a registry entry's
 * `create` returns and what both verifiers run. Apart from `../scheme.ts` (which names the
 * configured scheme, from the registry) so that the schemes and the registry import these without
 * importing the registry back.
 */

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
 * One configured scheme's rules, free of any crypto library (what a registry entry's `create`
 * returns): the Node verifier (`node:crypto`, sync) and the Web verifier (`crypto.subtle`, async)
 * both compute `algorithm` over `prefix + body` and compare.
 */
export interface SchemeRules {
  algorithm: 'sha256' | 'sha512';
  encoding: 'hex' | 'base64';
  /** Read and check the headers. Throws `WebhookVerificationError` (missing, malformed, outside the tolerance). */
  claim(context: SchemeHeaderContext): SignatureClaim;
  /** What a new delivery signs before its body. */
  signedPrefix(id: string, timestamp: number): string;
  /** The headers of a new delivery, given one digest per key (in the order of the keys). */
  headers(input: { id: string; timestamp: number; digests: readonly string[] }): Record<string, string>;
}

/** The rules plus the decoder of the scheme's key form: what the verifiers and the signer run. */
export interface KeyedSchemeRules extends SchemeRules {
  /** Turn a configured secret into HMAC key bytes. Throws `ConfigError` for a malformed secret. */
  key: KeyDecoder;
}

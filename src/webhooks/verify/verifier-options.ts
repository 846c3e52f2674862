import { ConfigError, WebhookVerificationError } from '../../errors/index.js';
import type { HeaderBag } from './header-value.js';
import { DEFAULT_SCHEME, type KeyedSchemeRules, type WebhookScheme } from '../schemes/scheme.js';
import { schemeRules } from '../schemes/registry.js';

/** The secrets, signature scheme and timestamp tolerance a verifier checks deliveries with. */
export interface VerifierOptions {
  /**
   * One or more secrets (`whsec_…` for Standard Webhooks). During a rotation, configure the old and
   * the new one: a delivery signed by either verifies.
   */
  secrets: string | readonly string[];
  /** @default { kind: 'standard-webhooks' } */
  scheme?: WebhookScheme;
  /** Allowed distance between the signed timestamp and now, in seconds, both ways. @default 300 */
  toleranceSeconds?: number;
}

/** A delivery to verify: its headers and raw body. */
export interface VerifyInput {
  headers: HeaderBag;
  /** The raw body: a Buffer / Uint8Array, or the exact string received. A parsed object is refused. */
  body: unknown;
  /** Current time in ms. @default Date.now() */
  now?: number;
}

export interface NormalizedVerifierOptions {
  rules: KeyedSchemeRules;
  /** Key bytes, one per secret, decoded once. */
  keys: Uint8Array[];
  toleranceSeconds: number;
}

/** Secrets decoded and options checked up front (shared by the Node and the Web verifier), so a bad secret fails at start-up. */
export function normalizeVerifierOptions(options: VerifierOptions): NormalizedVerifierOptions {
  // Unset (`secrets: process.env.CHECKOUT_WEBHOOK_SECRET` without the variable) is no secret, said so below.
  const given: unknown = options.secrets ?? [];
  const secrets: unknown[] = typeof given === 'string' ? [given] : Array.isArray(given) ? [...(given as unknown[])] : [given];
  if (!secrets.every((secret): secret is string => typeof secret === 'string')) {
    throw new ConfigError(
      'Verifier option secrets must be a string or an array of strings (whsec_…), e.g. CHECKOUT_WEBHOOK_SECRET split on spaces and commas.',
    );
  }
  if (secrets.length === 0) {
    throw new WebhookVerificationError('no_secret', 'No webhook secret configured: set CHECKOUT_WEBHOOK_SECRET (whsec_…) or pass secrets.');
  }
  const toleranceSeconds = options.toleranceSeconds ?? 300;
  if (Number.isNaN(toleranceSeconds) || toleranceSeconds < 0) {
    throw new ConfigError(`Verifier option toleranceSeconds must be a number ≥ 0, got ${toleranceSeconds}.`);
  }
  const rules = schemeRules(options.scheme ?? DEFAULT_SCHEME);
  return { rules, keys: secrets.map((secret, index) => rules.key(secret, index)), toleranceSeconds };
}

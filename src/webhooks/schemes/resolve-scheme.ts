import { hmacDigest } from '../verify/hmac-digest.js';
import { matchSignature } from '../verify/match-signature.js';
import { DEFAULT_SCHEME, type KeyedSchemeRules, type SchemeImplementation, type WebhookScheme } from './scheme.js';
import { schemeRules } from './registry.js';

/**
 * A scheme's rules with Node's crypto: synchronous, the fast path of `createVerifier` and
 * `signWebhook`. (`createWebVerifier` runs the same rules on `crypto.subtle`.)
 */
export function nodeScheme(rules: KeyedSchemeRules): SchemeImplementation {
  // Lazily, one key at a time: the usual match on the first key costs one HMAC.
  function* digests(prefix: string, body: Uint8Array | string, keys: readonly Uint8Array[]): Generator<string> {
    for (const key of keys) yield hmacDigest(rules.algorithm, key, prefix, body, rules.encoding);
  }
  return {
    key: rules.key,

    verify(context) {
      const claim = rules.claim(context);
      return matchSignature(claim, digests(claim.prefix, context.body, context.keys));
    },

    sign({ id, timestamp, body, keys }) {
      const prefix = rules.signedPrefix(id, timestamp);
      return rules.headers({ id, timestamp, digests: keys.map((key) => hmacDigest(rules.algorithm, key, prefix, body, rules.encoding)) });
    },
  };
}

/** A configured scheme with Node's crypto. */
export function resolveScheme(scheme: WebhookScheme = DEFAULT_SCHEME): SchemeImplementation {
  return nodeScheme(schemeRules(scheme));
}

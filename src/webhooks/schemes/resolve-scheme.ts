import { WebhookVerificationError } from '../../errors/index.js';
import { hmacDigest } from '../hmac-digest.js';
import { safeEqual } from '../safe-equal.js';
import { DEFAULT_SCHEME, type KeyedSchemeRules, type SchemeImplementation, type WebhookScheme } from '../scheme.js';
import { schemeRules } from './registry.js';

/**
 * A scheme's rules with Node's crypto: synchronous, the fast path of `createVerifier` and
 * `signWebhook`. (`createWebVerifier` runs the same rules on `crypto.subtle`.)
 */
export function nodeScheme(rules: KeyedSchemeRules): SchemeImplementation {
  return {
    key: rules.key,

    verify(context) {
      const claim = rules.claim(context);
      for (const key of context.keys) {
        const expected = hmacDigest(rules.algorithm, key, claim.prefix, context.body, rules.encoding);
        for (const candidate of claim.signatures) if (safeEqual(candidate, expected)) return claim.delivery;
      }
      throw new WebhookVerificationError('bad_signature', claim.noMatch);
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

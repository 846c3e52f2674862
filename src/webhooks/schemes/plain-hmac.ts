import { WebhookVerificationError } from '../../errors/index.js';
import { utf8Secret } from '../decode-secret.js';
import { hmacDigest } from '../hmac-digest.js';
import { safeEqual } from '../safe-equal.js';
import type { PlainHmacScheme, SchemeImplementation } from '../scheme.js';

/** A plain HMAC-SHA256/512 of the raw body, hex or base64, in a named header. */
export function plainHmac(scheme: PlainHmacScheme): SchemeImplementation {
  const headerName = scheme.header.toLowerCase();
  const algorithm = scheme.algorithm ?? 'sha256';
  const encoding = scheme.encoding ?? 'hex';
  const prefix = scheme.prefix ?? '';
  return {
    key: utf8Secret,

    verify({ header, body, keys }) {
      const value = header(headerName);
      if (value === undefined) throw new WebhookVerificationError('missing_headers', `Missing required header ${headerName}.`);
      if (!value.startsWith(prefix)) {
        throw new WebhookVerificationError('bad_signature', `Invalid ${headerName}: expected it to start with "${prefix}".`);
      }
      const digest = value.slice(prefix.length).trim();
      const given = encoding === 'hex' ? digest.toLowerCase() : digest;
      for (const key of keys) {
        if (safeEqual(given, hmacDigest(algorithm, key, '', body, encoding))) return { id: undefined, timestamp: undefined };
      }
      throw new WebhookVerificationError(
        'bad_signature',
        `No matching signature found in ${headerName}: the HMAC-${algorithm.toUpperCase()} must cover the exact raw body bytes and use one of the configured secrets.`,
      );
    },

    sign({ body, keys }) {
      // One header holds one digest: sign with the first (newest) secret.
      const [key] = keys;
      if (!key) return {};
      return { [headerName]: `${prefix}${hmacDigest(algorithm, key, '', body, encoding)}` };
    },
  };
}

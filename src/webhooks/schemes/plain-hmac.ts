import { WebhookVerificationError } from '../../errors/index.js';
import { utf8Secret } from '../decode-secret.js';
import type { PlainHmacScheme, SchemeRules } from '../scheme.js';

/** A plain HMAC-SHA256/512 of the raw body, hex or base64, in a named header. */
export function plainHmac(scheme: PlainHmacScheme): SchemeRules {
  const headerName = scheme.header.toLowerCase();
  const algorithm = scheme.algorithm ?? 'sha256';
  const encoding = scheme.encoding ?? 'hex';
  const prefix = scheme.prefix ?? '';
  return {
    algorithm,
    encoding,
    key: utf8Secret,

    claim({ header }) {
      const value = header(headerName);
      if (value === undefined) throw new WebhookVerificationError('missing_headers', `Missing required header ${headerName}.`);
      if (!value.startsWith(prefix)) {
        throw new WebhookVerificationError('bad_signature', `Invalid ${headerName}: expected it to start with "${prefix}".`);
      }
      const digest = value.slice(prefix.length).trim();
      return {
        delivery: { id: undefined, timestamp: undefined },
        prefix: '',
        signatures: [encoding === 'hex' ? digest.toLowerCase() : digest],
        noMatch: `No matching signature found in ${headerName}: the HMAC-${algorithm.toUpperCase()} must cover the exact raw body bytes and use one of the configured secrets.`,
      };
    },

    signedPrefix: () => '',

    // One header holds one digest: sign with the first (newest) secret.
    headers: ({ digests: [digest] }) => (digest === undefined ? {} : { [headerName]: `${prefix}${digest}` }),
  };
}

import { WebhookVerificationError } from '../../errors/index.js';
import { checkTolerance, parseTimestamp } from '../check-timestamp.js';
import { utf8Secret } from '../decode-secret.js';
import type { SchemeRules, StripeStyleScheme } from '../scheme.js';

/** Stripe-style `t=…,v1=…` over `<t>.<raw body>`, hex HMAC-SHA256. */
export function stripeStyle(scheme: StripeStyleScheme): SchemeRules {
  const headerName = (scheme.header ?? 'stripe-signature').toLowerCase();
  return {
    algorithm: 'sha256',
    encoding: 'hex',
    key: utf8Secret,

    claim({ header, nowSeconds, toleranceSeconds }) {
      const value = header(headerName);
      if (value === undefined) {
        throw new WebhookVerificationError('missing_headers', `Missing required header ${headerName}.`);
      }
      let t: string | undefined;
      const signatures: string[] = [];
      for (const item of value.split(',')) {
        const index = item.indexOf('=');
        const name = item.slice(0, index).trim();
        const part = item.slice(index + 1).trim();
        if (name === 't') t = part;
        else if (name === 'v1') signatures.push(part.toLowerCase());
      }
      if (t === undefined) {
        throw new WebhookVerificationError('bad_timestamp', `Invalid ${headerName}: no t=<unix seconds> element.`);
      }
      const timestamp = parseTimestamp(t, `${headerName} t=`);
      checkTolerance(timestamp, nowSeconds, toleranceSeconds);
      if (signatures.length === 0) throw new WebhookVerificationError('bad_signature', `No v1= signature in ${headerName}.`);
      return {
        delivery: { id: undefined, timestamp },
        prefix: `${t}.`,
        signatures,
        noMatch: 'No matching signature found: the signature must cover the exact raw body bytes and be made with one of the configured secrets.',
      };
    },

    signedPrefix: (_id, timestamp) => `${timestamp}.`,

    headers: ({ timestamp, digests }) => ({ [headerName]: [`t=${timestamp}`, ...digests.map((digest) => `v1=${digest}`)].join(',') }),
  };
}

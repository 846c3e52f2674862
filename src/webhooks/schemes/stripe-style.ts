import { WebhookVerificationError } from '../../errors/index.js';
import { checkTolerance, parseTimestamp } from '../check-timestamp.js';
import { utf8Secret } from '../decode-secret.js';
import { hmacDigest } from '../hmac-digest.js';
import { safeEqual } from '../safe-equal.js';
import type { SchemeImplementation, StripeStyleScheme } from '../scheme.js';

/** Stripe-style `t=…,v1=…` over `<t>.<raw body>`, hex HMAC-SHA256. */
export function stripeStyle(scheme: StripeStyleScheme): SchemeImplementation {
  const headerName = (scheme.header ?? 'stripe-signature').toLowerCase();
  return {
    key: utf8Secret,

    verify({ header, body, keys, nowSeconds, toleranceSeconds }) {
      const value = header(headerName);
      if (value === undefined) {
        throw new WebhookVerificationError('missing_headers', `Missing required header ${headerName}.`);
      }
      let t: string | undefined;
      const given: string[] = [];
      for (const item of value.split(',')) {
        const index = item.indexOf('=');
        const name = item.slice(0, index).trim();
        const part = item.slice(index + 1).trim();
        if (name === 't') t = part;
        else if (name === 'v1') given.push(part.toLowerCase());
      }
      if (t === undefined) {
        throw new WebhookVerificationError('bad_timestamp', `Invalid ${headerName}: no t=<unix seconds> element.`);
      }
      const timestamp = parseTimestamp(t, `${headerName} t=`);
      checkTolerance(timestamp, nowSeconds, toleranceSeconds);
      if (given.length === 0) throw new WebhookVerificationError('bad_signature', `No v1= signature in ${headerName}.`);
      for (const key of keys) {
        const expected = hmacDigest('sha256', key, `${t}.`, body, 'hex');
        for (const candidate of given) if (safeEqual(candidate, expected)) return { id: undefined, timestamp };
      }
      throw new WebhookVerificationError(
        'bad_signature',
        'No matching signature found: the signature must cover the exact raw body bytes and be made with one of the configured secrets.',
      );
    },

    sign({ timestamp, body, keys }) {
      const signatures = keys.map((key) => `v1=${hmacDigest('sha256', key, `${timestamp}.`, body, 'hex')}`);
      return { [headerName]: [`t=${timestamp}`, ...signatures].join(',') };
    },
  };
}

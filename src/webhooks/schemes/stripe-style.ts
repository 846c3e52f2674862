import { z } from 'zod';
import { WebhookVerificationError } from '../../errors/index.js';
import { checkTolerance, parseTimestamp } from './check-timestamp.js';
import type { SchemeRules } from './rules.js';
import { defineScheme } from './scheme-entry.js';

const StripeStyleConfig = z.object({
  kind: z.literal('stripe-style'),
  /** @default 'stripe-signature' */
  header: z.string().min(1).optional(),
});

/**
 * Stripe-style: one header `t=<unix seconds>,v1=<hex HMAC-SHA256>[,v1=…]` over `<t>.<raw body>`.
 * As Stripe does, the key is the secret string itself (its UTF-8 bytes).
 * @example { kind: 'stripe-style', header: 'stripe-signature' }
 */
export type StripeStyleScheme = z.infer<typeof StripeStyleConfig>;

const headerOf = (scheme: StripeStyleScheme) => (scheme.header ?? 'stripe-signature').toLowerCase();

/** `t=<digits>` and `v1=` elements, comma-separated: a Stripe-style signature header. */
function looksStripeStyle(value: string): boolean {
  const names = value.split(',').map((item) => item.split('=')[0]?.trim());
  return /(?:^|,)\s*t=[0-9]+\s*(?:,|$)/.test(value) && names.includes('v1');
}

/** Stripe-style `t=…,v1=…` over `<t>.<raw body>`, hex HMAC-SHA256. */
function stripeStyleRules(scheme: StripeStyleScheme): SchemeRules {
  const headerName = headerOf(scheme);
  return {
    algorithm: 'sha256',
    encoding: 'hex',

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

export const stripeStyle = defineScheme(StripeStyleConfig, {
  text: { usage: 'stripe-style[:header]', parse: ([header]) => ({ header: header || undefined }) },
  keyForm: 'utf8',
  timestampHeader: (scheme) => `${scheme.header ?? 'stripe-signature'} t=`,
  create: stripeStyleRules,
  looksLike: (headers) =>
    Object.entries(headers)
      .filter(([, value]) => looksStripeStyle(value))
      .map(([header]) => ({ kind: 'stripe-style', header })),
});

import { hmacDigest } from '../webhooks/hmac-digest.js';
import type { WebhookScheme } from '../webhooks/scheme.js';
import type { CapturedDelivery } from './capture-format.js';
import type { KeyVariant } from './key-variants.js';

/** One configuration to try: a scheme and how the secret becomes its key. */
export interface ProbeCandidate {
  scheme: WebhookScheme;
  key: KeyVariant;
}

const ALGORITHMS = ['sha256', 'sha512'] as const;
const ENCODINGS = ['hex', 'base64'] as const;

/** `t=<digits>` and `v1=` elements, comma-separated: a Stripe-style signature header. */
function looksStripeStyle(value: string): boolean {
  const names = value.split(',').map((item) => item.split('=')[0]?.trim());
  return /(?:^|,)\s*t=[0-9]+\s*(?:,|$)/.test(value) && names.includes('v1');
}

/**
 * Every configuration worth trying on these captures: Standard Webhooks when its headers are
 * there; Stripe-style in each header that looks like one; and a plain HMAC (SHA-256/512, hex or
 * base64) in each header whose value ends with the body's digest (the rest is the prefix, such as
 * `sha256=`). Each with every key variant. Candidates are in that order, without repeats.
 */
export function probeCandidates(captures: readonly CapturedDelivery[], keys: readonly KeyVariant[]): ProbeCandidate[] {
  const found = new Map<string, ProbeCandidate>();
  const add = (scheme: WebhookScheme, key: KeyVariant) => {
    const id = JSON.stringify([scheme, key.form]);
    if (!found.has(id)) found.set(id, { scheme, key });
  };
  if (captures.some((capture) => 'webhook-signature' in capture.headers)) for (const key of keys) add({ kind: 'standard-webhooks' }, key);
  for (const capture of captures) {
    for (const [header, value] of Object.entries(capture.headers)) {
      if (looksStripeStyle(value)) for (const key of keys) add({ kind: 'stripe-style', header }, key);
    }
  }
  for (const capture of captures) {
    for (const [header, value] of Object.entries(capture.headers)) {
      for (const key of keys) {
        for (const algorithm of ALGORITHMS) {
          for (const encoding of ENCODINGS) {
            const digest = hmacDigest(algorithm, key.key, '', capture.body, encoding);
            const comparable = encoding === 'hex' ? value.toLowerCase() : value;
            if (!comparable.endsWith(digest)) continue;
            const prefix = value.slice(0, value.length - digest.length);
            add({ kind: 'hmac', header, algorithm, encoding, ...(prefix ? { prefix } : {}) }, key);
          }
        }
      }
    }
  }
  return [...found.values()];
}

import { decodeWhsecSecret } from '../webhooks/decode-secret.js';
import type { WebhookScheme } from '../webhooks/scheme.js';

/**
 * How a secret becomes HMAC key bytes: `utf8`, the string as is (Stripe, GitHub, Shopify), or
 * `whsec-base64`, the base64 part after `whsec_` decoded (Standard Webhooks).
 */
export type KeyForm = 'utf8' | 'whsec-base64';

export interface KeyVariant {
  form: KeyForm;
  key: Uint8Array;
}

/** The forms a receiver's scheme uses today: only these combinations can be configured. */
export const RECEIVER_KEY_FORM: Record<WebhookScheme['kind'], KeyForm> = {
  'standard-webhooks': 'whsec-base64',
  'stripe-style': 'utf8',
  hmac: 'utf8',
};

export const KEY_FORM_LABEL: Record<KeyForm, string> = {
  utf8: 'the secret string as is',
  'whsec-base64': 'the base64 part after whsec_, decoded',
};

/** Every key a secret may stand for: its UTF-8 bytes and, for `whsec_…`, its decoded base64 part. */
export function keyVariants(secret: string): KeyVariant[] {
  const variants: KeyVariant[] = [{ form: 'utf8', key: Buffer.from(secret, 'utf8') }];
  if (secret.startsWith('whsec_')) {
    try {
      variants.push({ form: 'whsec-base64', key: decodeWhsecSecret(secret) });
    } catch {
      // Not base64 after the prefix: only the UTF-8 form is possible.
    }
  }
  return variants;
}

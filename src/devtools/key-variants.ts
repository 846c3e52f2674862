import { decodeWhsecSecret, type KeyForm } from '../webhooks/schemes/decode-secret.js';

export type { KeyForm } from '../webhooks/schemes/decode-secret.js';

export interface KeyVariant {
  form: KeyForm;
  key: Uint8Array;
}

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

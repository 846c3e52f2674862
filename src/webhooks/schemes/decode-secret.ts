import { ConfigError } from '../../errors/index.js';
import { base64Decode } from '../verify/byte-encodings.js';
import { utf8Bytes } from '../verify/utf8.js';

const WHSEC_PREFIX = 'whsec_';
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

// Both decoders avoid Buffer: the WebCrypto verifier (checkout-kit/web) decodes secrets with them too.

/** Key bytes of a Standard Webhooks secret: the base64 part after `whsec_` (the prefix is optional). */
export function decodeWhsecSecret(secret: string, index = 0): Uint8Array {
  const encoded = secret.startsWith(WHSEC_PREFIX) ? secret.slice(WHSEC_PREFIX.length) : secret;
  const key = BASE64.test(encoded) ? base64Decode(encoded) : new Uint8Array(0);
  if (key.length === 0) {
    throw new ConfigError(
      `Webhook secret #${index + 1} is not a Standard Webhooks secret: expected whsec_<base64>. ` +
        'Copy it from the service dashboard, or make one with newWebhookSecret().',
    );
  }
  return key;
}

/** Key bytes of a secret used as is (Stripe-style and plain HMAC schemes). */
export function utf8Secret(secret: string, index = 0): Uint8Array {
  if (secret.length === 0) throw new ConfigError(`Webhook secret #${index + 1} is empty.`);
  return utf8Bytes(secret);
}

/**
 * How a configured secret becomes HMAC key bytes: `utf8`, the string as is (Stripe, GitHub,
 * Shopify), or `whsec-base64`, the base64 part after `whsec_` decoded (Standard Webhooks).
 */
export type KeyForm = 'utf8' | 'whsec-base64';

/** Turn secret #`index` into key bytes. Throws `ConfigError` for a malformed secret. */
export type KeyDecoder = (secret: string, index: number) => Uint8Array;

/** The decoder of each key form: a scheme names its form, the verifiers and signers decode with this. */
export const KEY_DECODERS: Record<KeyForm, KeyDecoder> = {
  utf8: utf8Secret,
  'whsec-base64': decodeWhsecSecret,
};

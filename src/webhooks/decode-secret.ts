import { ConfigError } from '../errors/index.js';

const WHSEC_PREFIX = 'whsec_';
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** Key bytes of a Standard Webhooks secret: the base64 part after `whsec_` (the prefix is optional). */
export function decodeWhsecSecret(secret: string, index = 0): Buffer {
  const encoded = secret.startsWith(WHSEC_PREFIX) ? secret.slice(WHSEC_PREFIX.length) : secret;
  const key = BASE64.test(encoded) ? Buffer.from(encoded, 'base64') : Buffer.alloc(0);
  if (key.length === 0) {
    throw new ConfigError(
      `Webhook secret #${index + 1} is not a Standard Webhooks secret: expected whsec_<base64>. ` +
        'Copy it from the service dashboard, or make one with newWebhookSecret().',
    );
  }
  return key;
}

/** Key bytes of a secret used as is (Stripe-style and plain HMAC schemes). */
export function utf8Secret(secret: string, index = 0): Buffer {
  if (secret.length === 0) throw new ConfigError(`Webhook secret #${index + 1} is empty.`);
  return Buffer.from(secret, 'utf8');
}

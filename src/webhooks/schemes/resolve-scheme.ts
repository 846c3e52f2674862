import { DEFAULT_SCHEME, type SchemeImplementation, type WebhookScheme } from '../scheme.js';
import { plainHmac } from './plain-hmac.js';
import { standardWebhooks } from './standard-webhooks.js';
import { stripeStyle } from './stripe-style.js';

/** The implementation of a configured scheme. */
export function resolveScheme(scheme: WebhookScheme = DEFAULT_SCHEME): SchemeImplementation {
  switch (scheme.kind) {
    case 'standard-webhooks':
      return standardWebhooks;
    case 'stripe-style':
      return stripeStyle(scheme);
    case 'hmac':
      return plainHmac(scheme);
  }
}

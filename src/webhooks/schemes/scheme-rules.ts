import { DEFAULT_SCHEME, type SchemeRules, type WebhookScheme } from '../scheme.js';
import { plainHmac } from './plain-hmac.js';
import { standardWebhooks } from './standard-webhooks.js';
import { stripeStyle } from './stripe-style.js';

/** The rules of a configured scheme, without any crypto: shared by the Node and the Web verifier. */
export function schemeRules(scheme: WebhookScheme = DEFAULT_SCHEME): SchemeRules {
  switch (scheme.kind) {
    case 'standard-webhooks':
      return standardWebhooks;
    case 'stripe-style':
      return stripeStyle(scheme);
    case 'hmac':
      return plainHmac(scheme);
  }
}

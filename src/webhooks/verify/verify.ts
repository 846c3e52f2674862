import { headerGetter } from './header-value.js';
import { rawBody } from './raw-body.js';
import type { VerifiedDelivery } from '../schemes/scheme.js';
import { nodeScheme } from '../schemes/resolve-scheme.js';
import { normalizeVerifierOptions, type VerifierOptions, type VerifyInput } from './verifier-options.js';

export type { VerifierOptions, VerifyInput } from './verifier-options.js';

/** Throws `WebhookVerificationError`, or returns what the delivery's headers said. */
export type WebhookVerifier = (input: VerifyInput) => VerifiedDelivery;

/**
 * Build a verifier on Node's crypto (synchronous, the fast path). Secrets are decoded once here, so
 * each delivery costs one HMAC per secret. Where Node's crypto is missing (Cloudflare Workers, edge
 * runtimes), `createWebVerifier` from `checkout-kit/web` runs the same rules on `crypto.subtle`.
 * @example
 * const verify = createVerifier({ secrets: process.env.CHECKOUT_WEBHOOK_SECRET!.split(/[\s,]+/) });
 * verify({ headers: req.headers, body: rawBuffer });
 */
export function createVerifier(options: VerifierOptions): WebhookVerifier {
  const { rules, keys, toleranceSeconds } = normalizeVerifierOptions(options);
  const scheme = nodeScheme(rules);
  return ({ headers, body, now }) =>
    scheme.verify({
      header: headerGetter(headers),
      body: rawBody(body),
      keys,
      nowSeconds: Math.floor((now ?? Date.now()) / 1000),
      toleranceSeconds,
    });
}

/** Verify one delivery. Prefer `createVerifier` when verifying many: it decodes secrets once. */
export function verifyWebhook(input: VerifyInput & VerifierOptions): VerifiedDelivery {
  return createVerifier(input)(input);
}

import { headerGetter } from './header-value.js';
import { matchSignature } from './match-signature.js';
import { rawBody } from './raw-body.js';
import type { VerifiedDelivery } from '../schemes/scheme.js';
import { normalizeVerifierOptions, type VerifierOptions, type VerifyInput } from './verifier-options.js';
import { importHmacKey, webHmacDigest, type HmacKey } from './web-hmac.js';

/** Rejects with `WebhookVerificationError`, or resolves with what the delivery's headers said. */
export type AsyncWebhookVerifier = (input: VerifyInput) => Promise<VerifiedDelivery>;

/**
 * Build a verifier on WebCrypto (`crypto.subtle`), for runtimes without Node's crypto or `Buffer`:
 * Cloudflare Workers, Vercel / Next.js edge, Deno, Bun, browsers. Same schemes, rules, errors and
 * messages as `createVerifier`; asynchronous, because `crypto.subtle` is. Secrets are decoded (and
 * a malformed one refused) here; the keys are imported once, on first use.
 * @example
 * import { createWebVerifier } from 'checkout-kit/web';
 * const verify = createWebVerifier({ secrets: env.CHECKOUT_WEBHOOK_SECRET.split(/[\s,]+/) });
 * await verify({ headers: request.headers, body: new Uint8Array(await request.arrayBuffer()) });
 */
export function createWebVerifier(options: VerifierOptions): AsyncWebhookVerifier {
  const { rules, keys, toleranceSeconds } = normalizeVerifierOptions(options);
  let imported: Promise<HmacKey[]> | undefined;
  return async ({ headers, body, now }) => {
    const raw = rawBody(body);
    const claim = rules.claim({ header: headerGetter(headers), nowSeconds: Math.floor((now ?? Date.now()) / 1000), toleranceSeconds });
    imported ??= Promise.all(keys.map((key) => importHmacKey(key, rules.algorithm)));
    const hmacKeys = await imported;
    return matchSignature(claim, await Promise.all(hmacKeys.map((key) => webHmacDigest(key, claim.prefix, raw, rules.encoding))));
  };
}

/** Verify one delivery on WebCrypto. Prefer `createWebVerifier` when verifying many: it imports keys once. */
export async function verifyWebhookWeb(input: VerifyInput & VerifierOptions): Promise<VerifiedDelivery> {
  return createWebVerifier(input)(input);
}

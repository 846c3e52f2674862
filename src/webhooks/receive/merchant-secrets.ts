import { CheckoutKitError, WebhookVerificationError } from '../../errors/index.js';
import type { Logger } from '../../log/index.js';
import type { VerifiedDelivery, WebhookScheme } from '../schemes/scheme.js';
import { createVerifier, type WebhookVerifier } from '../verify/verify.js';
import type { VerifyInput } from '../verify/verifier-options.js';
import { rawBody } from '../verify/raw-body.js';
import { bodyText } from './parse-delivery.js';

/**
 * The secrets the service signs one merchant's deliveries with, where it signs each merchant's with
 * its own (a partner platform that stores them: `merchants credentials`); `undefined` for a merchant
 * with none.
 */
export type MerchantSecrets = (merchantId: string) => Promise<readonly string[] | undefined> | readonly string[] | undefined;

/**
 * The merchant a delivery names (`data.merchantId`), read before the delivery is trusted: it only
 * picks which secrets to try, and a delivery verified with them is refused for any other merchant's
 * payment (the fulfillment engine compares it with a confirmed read).
 */
export function claimedMerchant(body: Uint8Array | string): string | undefined {
  const text = bodyText(body);
  if (text === undefined) return undefined;
  try {
    const merchantId = (JSON.parse(text) as { data?: { merchantId?: unknown } } | null)?.data?.merchantId;
    return typeof merchantId === 'string' && merchantId !== '' ? merchantId : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The receiver's verifier with per-merchant secrets: the configured secrets first; a delivery they
 * find badly signed (nothing else: a missing header or an old timestamp is refused as it is) is
 * tried with the secrets of the merchant it names. The first refusal is the one reported.
 */
export function withMerchantSecrets(
  verify: WebhookVerifier,
  options: { scheme: WebhookScheme; toleranceSeconds: number; merchantSecrets: MerchantSecrets; logger: Logger },
): (input: VerifyInput) => Promise<VerifiedDelivery> {
  // One verifier per merchant, rebuilt when its secrets change (a rotation, `merchants credentials`).
  const verifiers = new Map<string, { secrets: string; verify: WebhookVerifier }>();
  const verifierFor = (merchantId: string, secrets: readonly string[]): WebhookVerifier | undefined => {
    const key = secrets.join('\n');
    const known = verifiers.get(merchantId);
    if (known?.secrets === key) return known.verify;
    try {
      const built = createVerifier({ secrets, scheme: options.scheme, toleranceSeconds: options.toleranceSeconds });
      verifiers.set(merchantId, { secrets: key, verify: built });
      return built;
    } catch (error) {
      if (!(error instanceof CheckoutKitError)) throw error;
      options.logger.error({ merchantId }, `The stored webhook secret of merchant ${merchantId} is unusable: ${error.message}`);
      return undefined;
    }
  };

  return async (input) => {
    try {
      return verify(input);
    } catch (error) {
      if (!(error instanceof WebhookVerificationError) || error.reason !== 'bad_signature') throw error;
      const merchantId = claimedMerchant(rawBody(input.body));
      const secrets = merchantId === undefined ? undefined : await options.merchantSecrets(merchantId);
      const own = merchantId === undefined || !secrets?.length ? undefined : verifierFor(merchantId, secrets);
      if (!own) throw error;
      try {
        return own(input);
      } catch {
        throw error;
      }
    }
  };
}

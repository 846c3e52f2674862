import { WebhookVerificationError } from '../../errors/index.js';
import type { SignatureClaim, VerifiedDelivery } from '../schemes/rules.js';
import { constantTimeEqual } from './constant-time-equal.js';

/**
 * The one comparison every verifier makes: each expected digest (one per configured key, in the
 * keys' order) against each signature the headers gave, in constant time. Only where the digests
 * come from differs: Node's HMAC (sync) yields them one at a time, so a match on the first key
 * computes no other; WebCrypto's (async) hands them over computed.
 */
export function matchSignature(claim: SignatureClaim, expected: Iterable<string>): VerifiedDelivery {
  for (const digest of expected) {
    for (const candidate of claim.signatures) if (constantTimeEqual(candidate, digest)) return claim.delivery;
  }
  throw new WebhookVerificationError('bad_signature', claim.noMatch);
}

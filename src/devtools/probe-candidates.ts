import type { WebhookScheme } from '../webhooks/schemes/scheme.js';
import { SCHEMES } from '../webhooks/schemes/registry.js';
import type { CapturedDelivery } from './capture-format.js';
import type { KeyVariant } from './key-variants.js';

/** One configuration to try: a scheme and how the secret becomes its key. */
export interface ProbeCandidate {
  scheme: WebhookScheme;
  key: KeyVariant;
}

/**
 * Every configuration worth trying on these captures: each scheme in registry order (Standard
 * Webhooks first) offers what the captures' headers look signed with (`looksLike`), e.g. a
 * Stripe-style header, or a header ending in an HMAC digest (the rest is the prefix, such as
 * `sha256=`). Each with every key variant, without repeats.
 */
export function probeCandidates(captures: readonly CapturedDelivery[], keys: readonly KeyVariant[]): ProbeCandidate[] {
  const found = new Map<string, ProbeCandidate>();
  for (const entry of Object.values(SCHEMES)) {
    for (const capture of captures) {
      for (const scheme of entry.looksLike(capture.headers)) {
        for (const key of keys) {
          const id = JSON.stringify([scheme, key.form]);
          if (!found.has(id)) found.set(id, { scheme, key });
        }
      }
    }
  }
  return [...found.values()];
}

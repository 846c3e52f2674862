import { WebhookVerificationError } from '../errors/index.js';
import { headerGetter } from '../webhooks/verify/header-value.js';
import type { WebhookScheme } from '../webhooks/schemes/scheme.js';
import { keyFormOf, timestampHeaderOf } from '../webhooks/schemes/registry.js';
import { resolveScheme } from '../webhooks/schemes/resolve-scheme.js';
import type { CapturedDelivery } from './capture-format.js';
import { keyVariants, type KeyForm } from './key-variants.js';
import { probeCandidates, type ProbeCandidate } from './probe-candidates.js';

export interface ProbeOptions {
  captures: readonly CapturedDelivery[];
  /** The webhook secret the service shows for this endpoint. */
  secret: string;
}

/** A configuration and how many captures it verifies. */
export interface ProbeMatch {
  /** The receiver's `scheme` option. */
  scheme: WebhookScheme;
  keyForm: KeyForm;
  /** The receiver verifies this as is: `createReceiver({ scheme, secrets: [secret] })`. */
  usable: boolean;
  verified: number;
  total: number;
  /** The signed timestamp, when the scheme carries one, e.g. `webhook-timestamp`. */
  timestampHeader: string | undefined;
  /** Seconds from the signed timestamp to the capture's arrival (negative: signed in the future). */
  signedAgeSeconds: { min: number; max: number } | undefined;
}

export interface ProbeReport {
  captures: number;
  /** Configurations tried. */
  tried: number;
  /** Configurations that verify every capture, those the receiver can use first. */
  matches: ProbeMatch[];
  /** Configurations that verify some captures only (another secret signed the rest?). */
  partial: ProbeMatch[];
}

function evaluate(candidate: ProbeCandidate, captures: readonly CapturedDelivery[]): ProbeMatch {
  const implementation = resolveScheme(candidate.scheme);
  const ages: number[] = [];
  let verified = 0;
  for (const capture of captures) {
    const receivedSeconds = Math.floor(Date.parse(capture.receivedAt) / 1000);
    try {
      // The verifier the receiver runs, with the candidate's key bytes. Tolerance is infinite: a
      // capture may be days old, and the question is only which scheme signed it.
      const { timestamp } = implementation.verify({
        header: headerGetter(capture.headers),
        body: capture.body,
        keys: [candidate.key.key],
        nowSeconds: receivedSeconds,
        toleranceSeconds: Number.POSITIVE_INFINITY,
      });
      verified += 1;
      if (timestamp !== undefined) ages.push(receivedSeconds - timestamp);
    } catch (error) {
      if (!(error instanceof WebhookVerificationError)) throw error;
    }
  }
  return {
    scheme: candidate.scheme,
    keyForm: candidate.key.form,
    usable: keyFormOf(candidate.scheme) === candidate.key.form,
    verified,
    total: captures.length,
    timestampHeader: timestampHeaderOf(candidate.scheme),
    signedAgeSeconds: ages.length ? { min: Math.min(...ages), max: Math.max(...ages) } : undefined,
  };
}

/**
 * Find how the service signs its webhooks: try every supported scheme, in every header that could
 * carry it, with every form of the secret, against captured deliveries.
 * @example
 * const { captures } = await readCaptures('.checkout-kit/captures');
 * const { matches } = probeSignature({ captures, secret: 'whsec_…' });
 */
export function probeSignature(options: ProbeOptions): ProbeReport {
  const candidates = probeCandidates(options.captures, keyVariants(options.secret));
  const results = candidates.map((candidate) => evaluate(candidate, options.captures));
  const total = options.captures.length;
  // Stable sort: within each group the candidates keep their order (Standard Webhooks first).
  const matches = results.filter((r) => total > 0 && r.verified === total).sort((a, b) => Number(b.usable) - Number(a.usable));
  const partial = results.filter((r) => r.verified > 0 && r.verified < total).sort((a, b) => b.verified - a.verified);
  return { captures: total, tried: candidates.length, matches, partial };
}

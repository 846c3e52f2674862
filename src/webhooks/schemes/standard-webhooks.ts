import { z } from 'zod';
import { WebhookVerificationError } from '../../errors/index.js';
import { checkTolerance, parseTimestamp } from './check-timestamp.js';
import type { SchemeRules } from './rules.js';
import { defineScheme } from './scheme-entry.js';

const ID = 'webhook-id';
const TIMESTAMP = 'webhook-timestamp';
const SIGNATURE = 'webhook-signature';

/** `v1,` entries of a `webhook-signature` header (other versions are skipped, per the spec). */
function v1Signatures(header: string): string[] {
  const out: string[] = [];
  for (const entry of header.split(' ')) {
    // A proxy that split the header in two makes Node join them with ", ".
    const clean = entry.endsWith(',') ? entry.slice(0, -1) : entry;
    if (clean.startsWith('v1,') && clean.length > 3) out.push(clean.slice(3));
  }
  return out;
}

/** The rules are the same for every configuration: Standard Webhooks fixes its headers. */
const rules: SchemeRules = {
  algorithm: 'sha256',
  encoding: 'base64',

  claim({ header, nowSeconds, toleranceSeconds }) {
    const id = header(ID);
    const timestampText = header(TIMESTAMP);
    const signature = header(SIGNATURE);
    if (id === undefined || timestampText === undefined || signature === undefined) {
      const missing = [id === undefined && ID, timestampText === undefined && TIMESTAMP, signature === undefined && SIGNATURE].filter(Boolean);
      throw new WebhookVerificationError(
        'missing_headers',
        `Missing required header(s) ${missing.join(', ')}: the delivery is not signed with Standard Webhooks, or a proxy dropped them.`,
      );
    }
    const timestamp = parseTimestamp(timestampText, TIMESTAMP);
    checkTolerance(timestamp, nowSeconds, toleranceSeconds);
    const signatures = v1Signatures(signature);
    if (signatures.length === 0) {
      throw new WebhookVerificationError('bad_signature', `No v1 signature in ${SIGNATURE}: expected space-separated "v1,<base64>" entries.`);
    }
    return {
      delivery: { id, timestamp },
      prefix: `${id}.${timestampText}.`,
      signatures,
      noMatch:
        'No matching signature found: the signature must cover the exact raw body bytes (not re-serialised JSON) and be made with one of the configured secrets.',
    };
  },

  signedPrefix: (id, timestamp) => `${id}.${timestamp}.`,

  headers: ({ id, timestamp, digests }) => ({
    [ID]: id,
    [TIMESTAMP]: String(timestamp),
    [SIGNATURE]: digests.map((digest) => `v1,${digest}`).join(' '),
  }),
};

const StandardWebhooksConfig = z.object({ kind: z.literal('standard-webhooks') });

/**
 * Standard Webhooks: headers `webhook-id`, `webhook-timestamp` (unix seconds) and `webhook-signature`
 * (space-separated `v1,<base64 HMAC-SHA256>` entries) over `<id>.<timestamp>.<raw body>`.
 * The key is the base64-decoded part of the `whsec_…` secret.
 */
export type StandardWebhooksScheme = z.infer<typeof StandardWebhooksConfig>;

/** Standard Webhooks, the default scheme: base64 HMAC-SHA256 over `<id>.<timestamp>.<raw body>`. */
export const standardWebhooks = defineScheme(StandardWebhooksConfig, {
  text: { usage: 'standard-webhooks', parse: () => ({}) },
  keyForm: 'whsec-base64',
  timestampHeader: () => TIMESTAMP,
  create: () => rules,
  looksLike: (headers) => (SIGNATURE in headers ? [{ kind: 'standard-webhooks' as const }] : []),
});

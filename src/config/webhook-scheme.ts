import { z } from 'zod';
import { ConfigError } from '../errors/index.js';
import type { WebhookScheme } from '../webhooks/index.js';

const SchemeSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('standard-webhooks') }),
  z.object({ kind: z.literal('stripe-style'), header: z.string().min(1).optional() }),
  z.object({
    kind: z.literal('hmac'),
    header: z.string().min(1),
    algorithm: z.enum(['sha256', 'sha512']).optional(),
    encoding: z.enum(['hex', 'base64']).optional(),
    prefix: z.string().optional(),
  }),
]);

/**
 * `CHECKOUT_WEBHOOK_SCHEME`: `standard-webhooks` (default), `stripe-style[:header]`,
 * `hmac:<header>[:sha256|sha512[:hex|base64[:prefix]]]`, or the JSON object `probe-signature`
 * prints, e.g. `{"kind":"hmac","header":"x-signature","encoding":"base64"}`.
 */
export function parseWebhookScheme(value: string | undefined): WebhookScheme {
  if (!value) return { kind: 'standard-webhooks' };
  const fail = (why: string) =>
    new ConfigError(`CHECKOUT_WEBHOOK_SCHEME "${value}" ${why}: use standard-webhooks, stripe-style[:header], hmac:<header>[:sha256|sha512[:hex|base64[:prefix]]] or the JSON that probe-signature prints.`);
  let candidate: unknown;
  if (value.trim().startsWith('{')) {
    try {
      candidate = JSON.parse(value);
    } catch {
      throw fail('is not valid JSON');
    }
  } else {
    const [kind, header, algorithm, encoding, ...prefix] = value.split(':');
    candidate =
      kind === 'hmac'
        ? { kind, header, algorithm: algorithm || undefined, encoding: encoding || undefined, prefix: prefix.length ? prefix.join(':') : undefined }
        : kind === 'stripe-style'
          ? { kind, header: header || undefined }
          : { kind };
  }
  const parsed = SchemeSchema.safeParse(candidate);
  if (!parsed.success) throw fail('is not a scheme checkout-kit knows');
  return parsed.data as WebhookScheme;
}

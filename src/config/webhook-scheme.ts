import { ConfigError } from '../errors/index.js';
import { DEFAULT_SCHEME, type WebhookScheme } from '../webhooks/schemes/scheme.js';
import { isSchemeKind, SCHEMES, WebhookSchemeSchema } from '../webhooks/schemes/registry.js';

const SHORT_FORMS = Object.values(SCHEMES)
  .map((entry) => entry.text.usage)
  .join(', ');

/**
 * `CHECKOUT_WEBHOOK_SCHEME`: a scheme's short form, `kind[:part…]` as its registry entry reads it
 * (e.g. `stripe-style:x-sig`; unset is `standard-webhooks`), or the JSON object `probe-signature`
 * prints, e.g. `{"kind":"hmac","header":"x-signature","encoding":"base64"}`.
 */
export function parseWebhookScheme(value: string | undefined): WebhookScheme {
  if (!value) return { ...DEFAULT_SCHEME };
  const fail = (why: string) => new ConfigError(`CHECKOUT_WEBHOOK_SCHEME "${value}" ${why}: use ${SHORT_FORMS} or the JSON that probe-signature prints.`);
  let candidate: unknown;
  if (value.trim().startsWith('{')) {
    try {
      candidate = JSON.parse(value);
    } catch {
      throw fail('is not valid JSON');
    }
  } else {
    const [kind = '', ...parts] = value.split(':');
    candidate = { kind, ...(isSchemeKind(kind) ? SCHEMES[kind].text.parse(parts) : {}) };
  }
  const parsed = WebhookSchemeSchema.safeParse(candidate);
  if (!parsed.success) throw fail('is not a scheme checkout-kit knows');
  return parsed.data;
}

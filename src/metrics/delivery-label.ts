import type { WebhookResult } from '../webhooks/receive/responses.js';

/** A delivery's result in one word: `stored`, `duplicate`, or the error code it was answered with. */
export function deliveryLabel(result: WebhookResult): string {
  const body = result.body as { duplicate?: unknown; error?: { code?: unknown } };
  if (result.status >= 200 && result.status < 300) return body.duplicate === true ? 'duplicate' : 'stored';
  return typeof body.error?.code === 'string' ? body.error.code : `http_${result.status}`;
}

import { webhookError, type WebhookResult } from '../receive/responses.js';

/** A `Content-Length` above `limit`: refuse before reading a byte. */
export function declaredTooLarge(contentLength: string | readonly string[] | null | undefined, limit: number): boolean {
  return typeof contentLength === 'string' && Number(contentLength) > limit;
}

/** The 413 every adapter answers when it stops reading at the limit. */
export function tooLarge(limit: number): WebhookResult {
  return webhookError('payload_too_large', `Webhook body is larger than the limit of ${limit} bytes (receiver option maxBodyBytes).`, {
    connection: 'close',
  });
}

/** The 405 every adapter answers for a method other than POST. */
export function methodNotAllowed(method: string | undefined): WebhookResult {
  return webhookError('method_not_allowed', `Webhooks are delivered with POST, got ${method ?? 'no method'}.`, { allow: 'POST' });
}

import type { WebhookVerificationError, WebhookVerificationReason } from '../../errors/index.js';
import { errorObject, type ErrorObject } from '../../schemas/error.js';

/** Error codes the receiver answers with, in the spec's `{ error: { code, message } }` object. */
export type WebhookErrorCode =
  | 'missing_signature_headers'
  | 'invalid_timestamp'
  | 'invalid_signature'
  | 'wrong_environment'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'invalid_json'
  | 'invalid_event'
  | 'method_not_allowed'
  | 'raw_body_required'
  | 'store_unavailable'
  | 'internal_error';

/**
 * The HTTP status of each code. Bad input is always 4xx; 5xx only for what the sender cannot fix
 * (a merchant's middleware that consumed the raw body, a store that is down): it retries later.
 */
export const WEBHOOK_ERROR_STATUS: Readonly<Record<WebhookErrorCode, number>> = {
  missing_signature_headers: 400,
  invalid_timestamp: 400,
  invalid_signature: 401,
  wrong_environment: 403,
  payload_too_large: 413,
  unsupported_media_type: 415,
  invalid_json: 400,
  invalid_event: 400,
  method_not_allowed: 405,
  raw_body_required: 500,
  store_unavailable: 503,
  internal_error: 500,
};

const REASON_CODE: Readonly<Record<WebhookVerificationReason, WebhookErrorCode>> = {
  missing_headers: 'missing_signature_headers',
  bad_timestamp: 'invalid_timestamp',
  timestamp_too_old: 'invalid_signature',
  timestamp_too_new: 'invalid_signature',
  bad_signature: 'invalid_signature',
  no_secret: 'invalid_signature',
  parsed_body: 'raw_body_required',
};

/** The body of a 200: the event is stored (now or by an earlier delivery). */
export interface WebhookAck {
  received: true;
  /** The event id. */
  id: string;
  /** True when this id was stored before: acknowledged, not dispatched again. */
  duplicate: boolean;
}

/** What the framework-free core answers; adapters write it as JSON. */
export interface WebhookResult {
  status: number;
  body: WebhookAck | ErrorObject;
  headers?: Record<string, string>;
  /** Which check a delivery failed verification on (for metrics and alerts; adapters do not send it). */
  reason?: WebhookVerificationReason;
}

export function webhookError(code: WebhookErrorCode, message: string, headers?: Record<string, string>): WebhookResult {
  return { status: WEBHOOK_ERROR_STATUS[code], body: errorObject(code, message), ...(headers ? { headers } : {}) };
}

export function verificationFailure(error: WebhookVerificationError): WebhookResult {
  return { ...webhookError(REASON_CODE[error.reason], error.message), reason: error.reason };
}

export function webhookAck(id: string, duplicate: boolean): WebhookResult {
  return { status: 200, body: { received: true, id, duplicate } };
}

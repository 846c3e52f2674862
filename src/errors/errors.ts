import type { z } from 'zod';
import { redact } from './redact.js';

/** Base class of every error checkout-kit throws. Messages are scrubbed of secrets. */
export class CheckoutKitError extends Error {
  override name = 'CheckoutKitError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(redact(message), options);
  }
}

/** Configuration is missing, malformed or inconsistent (for example test and live keys mixed). */
export class ConfigError extends CheckoutKitError {
  override name = 'ConfigError';
}

/** Input given to a toolkit call is invalid; nothing was sent. */
export class InvalidRequestError extends CheckoutKitError {
  override name = 'InvalidRequestError';
}

/** A money amount is not a valid decimal string; nothing was sent. */
export class MoneyError extends InvalidRequestError {
  override name = 'MoneyError';
}

/** The embedded or PostgreSQL store cannot be opened, read or written. */
export class StoreError extends CheckoutKitError {
  override name = 'StoreError';
}

export interface ApiErrorOptions {
  status: number;
  code: string;
  message: string;
  /** The operation, e.g. `payments.create`. */
  operation: string;
  method: string;
  url: string;
  idempotencyKey?: string | undefined;
  retryAfterMs?: number | undefined;
}

/** The service answered with an error object (`{ error: { code, message } }`) or an error status. */
export class ApiError extends CheckoutKitError {
  override name = 'ApiError';
  readonly status: number;
  readonly code: string;
  readonly operation: string;
  readonly method: string;
  readonly url: string;
  readonly idempotencyKey: string | undefined;
  readonly retryAfterMs: number | undefined;
  /** The service's own message, without the prefix this class adds. */
  readonly serviceMessage: string;

  constructor(options: ApiErrorOptions) {
    super(
      `${options.operation} failed: ${options.status} ${options.code}: ${options.message} (${options.method} ${options.url}${
        options.idempotencyKey ? `, Idempotency-Key ${options.idempotencyKey}` : ''
      })`,
    );
    this.status = options.status;
    this.code = options.code;
    this.operation = options.operation;
    this.method = options.method;
    this.url = options.url;
    this.idempotencyKey = options.idempotencyKey;
    this.retryAfterMs = options.retryAfterMs;
    this.serviceMessage = redact(options.message);
  }
}

/** The request never got an HTTP answer (DNS, refused connection, reset). */
export class NetworkError extends CheckoutKitError {
  override name = 'NetworkError';
}

/** The request got no answer within the configured timeout. */
export class TimeoutError extends CheckoutKitError {
  override name = 'TimeoutError';
}

/** A response (or event) did not match the expected schema. `issues` lists what was wrong. */
export class SchemaValidationError extends CheckoutKitError {
  override name = 'SchemaValidationError';
  readonly issues: z.core.$ZodIssue[];
  constructor(message: string, issues: z.core.$ZodIssue[], options?: { cause?: unknown }) {
    const summary = issues
      .slice(0, 5)
      .map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`)
      .join('; ');
    super(`${message}: ${summary}`, options);
    this.issues = issues;
  }
}

export type WebhookVerificationReason =
  | 'missing_headers'
  | 'bad_timestamp'
  | 'timestamp_too_old'
  | 'timestamp_too_new'
  | 'bad_signature'
  | 'no_secret'
  | 'parsed_body';

/** A webhook delivery failed verification. `reason` says which check failed. */
export class WebhookVerificationError extends CheckoutKitError {
  override name = 'WebhookVerificationError';
  readonly reason: WebhookVerificationReason;
  constructor(reason: WebhookVerificationReason, message: string) {
    super(message);
    this.reason = reason;
  }
}

/** A `checkoutUrl` failed the redirect guard: the buyer is never sent there. */
export class RedirectRejectedError extends CheckoutKitError {
  override name = 'RedirectRejectedError';
  readonly url: string;
  constructor(url: string, reason: string) {
    super(`Refusing to redirect to ${JSON.stringify(url.slice(0, 200))}: ${reason}. Check CHECKOUT_REDIRECT_HOSTS.`);
    this.url = url;
  }
}

/**
 * The HTTP status of each `CheckoutError` code: the one place the codes are listed
 * (`CheckoutErrorCode` is read from it), so the shop shows the same status for the same failure.
 */
export const CHECKOUT_ERROR_STATUS = {
  invalid_request: 400,
  not_found: 404,
  idempotency_key_reused: 409,
  checkout_in_progress: 409,
  token_not_available: 422,
  network_not_available: 422,
  invalid_response: 502,
  service_rejected: 502,
  service_unreachable: 503,
} as const satisfies Record<string, number>;

/** What went wrong with a checkout, e.g. `'token_not_available'`. */
export type CheckoutErrorCode = keyof typeof CHECKOUT_ERROR_STATUS;

export interface CheckoutErrorOptions {
  /** Which failure; the HTTP status follows from it (`CHECKOUT_ERROR_STATUS`). */
  code: CheckoutErrorCode;
  cause?: unknown;
}

/**
 * A checkout could not be created, with a code and the HTTP status the shop can show for it
 * (`CHECKOUT_ERROR_STATUS`): `invalid_request` 400, `not_found` 404, `idempotency_key_reused` 409,
 * `token_not_available` / `network_not_available` 422, `service_unreachable` 503, …
 * @example
 * throw new CheckoutError(`No checkout was created for order ${orderId}.`, { code: 'not_found' });
 */
export class CheckoutError extends CheckoutKitError {
  override name = 'CheckoutError';
  readonly code: CheckoutErrorCode;
  readonly status: (typeof CHECKOUT_ERROR_STATUS)[CheckoutErrorCode];
  constructor(message: string, options: CheckoutErrorOptions) {
    super(message, options);
    this.code = options.code;
    this.status = CHECKOUT_ERROR_STATUS[options.code];
  }
}

export function isCheckoutKitError(value: unknown): value is CheckoutKitError {
  return value instanceof CheckoutKitError;
}

export function isApiError(value: unknown): value is ApiError {
  return value instanceof ApiError;
}

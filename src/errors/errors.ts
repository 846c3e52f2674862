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

/** No store where one was to be read (`openStore`'s `mustExist` or `readonly`): nothing was ever stored there. */
export class NoStoreError extends ConfigError {
  override name = 'NoStoreError';
}

/** Input given to a toolkit call is invalid; nothing was sent. */
export class InvalidRequestError extends CheckoutKitError {
  override name = 'InvalidRequestError';
}

/** A money amount is not a valid decimal string; nothing was sent. */
export class MoneyError extends InvalidRequestError {
  override name = 'MoneyError';
}

/**
 * Why a store refused work, where its database says so: another process holds the write lock, or a
 * statement waited past its timeout (`busy`), the disk is full (`disk_full`), the database server
 * is down or refuses connections (`unreachable`). Each passes: work refused for one is tried again.
 * Set where the database's own error is read, once; undefined for a failure that does not pass by
 * itself (a damaged file, a table dropped by hand).
 */
export type StoreFailure = 'busy' | 'disk_full' | 'unreachable';

/** The embedded or PostgreSQL store cannot be opened, read or written. */
export class StoreError extends CheckoutKitError {
  override name = 'StoreError';
  /** Why, where the database said (see `StoreFailure`); undefined otherwise. */
  readonly reason: StoreFailure | undefined;
  constructor(message: string, options?: { cause?: unknown; reason?: StoreFailure | undefined }) {
    super(message, options);
    this.reason = options?.reason;
  }
}

/** What an `ApiError` carries of the service's refusal. */
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
  /**
   * Whether the answer's body was the spec's error object (spec 2.6). False for any other body
   * (HTML, plain text, empty, JSON of another shape): `code` is then `http_<status>` and `message`
   * the status text. The client decides it, in one place, for every answer it gets.
   * @default true
   */
  hasErrorObject?: boolean | undefined;
}

/** The statuses that blame the request (spec 3g: 400 invalid, 422 not available or a reused key). */
const blamesRequest = (status: number) => status === 400 || status === 422;

/**
 * The service answered with an error status: with the spec's error object (`{ error: { code,
 * message } }`), its refusal by its contract; without it (`hasErrorObject` false), an answer off
 * the spec, which says nothing about the request.
 */
export class ApiError extends CheckoutKitError {
  override name = 'ApiError';
  readonly status: number;
  readonly code: string;
  readonly operation: string;
  readonly method: string;
  readonly url: string;
  readonly idempotencyKey: string | undefined;
  readonly retryAfterMs: number | undefined;
  /** The service's own message, without the prefix this class adds (the status text when `hasErrorObject` is false). */
  readonly serviceMessage: string;
  /**
   * Whether the answer carried the spec's error object: only then are `code` and `serviceMessage`
   * the service's words, and only then can a 400 or 422 blame the request (see `offSpecRefusal`).
   */
  readonly hasErrorObject: boolean;

  constructor(options: ApiErrorOptions) {
    const hasErrorObject = options.hasErrorObject ?? true;
    const answer = hasErrorObject
      ? `${options.status} ${options.code}: ${options.message}`
      : blamesRequest(options.status)
        ? `the service's ${options.status} answer (${options.message}) is not the spec's error object: the service's fault, not the request's`
        : `${options.status} (${options.message}) without the spec's error object: another server may have answered (check CHECKOUT_BASE_URL), or the service failed`;
    super(
      `${options.operation} failed: ${answer} (${options.method} ${options.url}${options.idempotencyKey ? `, Idempotency-Key ${options.idempotencyKey}` : ''})`,
    );
    this.status = options.status;
    this.code = options.code;
    this.operation = options.operation;
    this.method = options.method;
    this.url = options.url;
    this.idempotencyKey = options.idempotencyKey;
    this.retryAfterMs = options.retryAfterMs;
    this.serviceMessage = redact(options.message);
    this.hasErrorObject = hasErrorObject;
  }
}

/**
 * An error status answered without the spec's error object (an HTML page, an empty body, JSON of
 * another shape): not the service's contract speaking, so it says nothing of the request, and a
 * create's outcome is unknown (its Idempotency-Key stands).
 */
export const isOffSpec = (error: unknown): boolean => error instanceof ApiError && !error.hasErrorObject;

/**
 * An off-spec answer (`isOffSpec`) of a status that would blame the request (400, 422): the
 * service's fault, never the caller's (answered 502 `invalid_response`). What a server may show its
 * caller of it: the operation and the status, no URL, no key. Undefined for any other error.
 */
export function offSpecRefusal(error: unknown): string | undefined {
  if (!(error instanceof ApiError) || !isOffSpec(error) || !blamesRequest(error.status)) return undefined;
  return `The payment service's ${error.status} answer to ${error.operation} does not match its spec (no error object)`;
}

/**
 * A refusal by the service's contract (its error object) that blames the request's own fields: a
 * 400 or 422, or a 413, a body too large for the service (a buyer's or tenant's field too long).
 * The caller can correct it; nothing was created.
 */
export function refusesRequest(error: unknown): boolean {
  return error instanceof ApiError && error.hasErrorObject && (blamesRequest(error.status) || error.status === 413);
}

/**
 * An off-spec answer (`isOffSpec`) of any other status a caller is not to retry (a redirect,
 * another server's 401 or 404 page): likely not the service at all, so what a server may show its
 * caller points at the base URL, not the keys. Undefined for any other error.
 */
export function offSpecElsewhere(error: unknown): string | undefined {
  if (!(error instanceof ApiError) || !isOffSpec(error) || blamesRequest(error.status)) return undefined;
  return `The payment service's address answered ${error.status} without the service's error object: another server may have answered (a wrong path, or a redirect to follow by hand); check CHECKOUT_BASE_URL with \`checkout-kit doctor\`.`;
}

/** The request never got an HTTP answer (DNS, refused connection, reset). */
export class NetworkError extends CheckoutKitError {
  override name = 'NetworkError';
}

/** The request got no answer within the configured timeout. */
export class TimeoutError extends CheckoutKitError {
  override name = 'TimeoutError';
}

/**
 * The service could not be asked just now: no answer (network, timeout), a rate limit or a server
 * fault. It says nothing of the request or the resource, and passes when the service is back.
 */
export function isServiceOutage(error: unknown): boolean {
  if (error instanceof NetworkError || error instanceof TimeoutError) return true;
  return error instanceof ApiError && isOutageStatus(error.status);
}

/** Statuses of a service that cannot be asked just now: rate limited, or a server fault. */
export const isOutageStatus = (status: number): boolean => status === 429 || status >= 500;

/** Where a schema issue is, as a dotted path (`depositAddresses.0.chainId`), `(root)` for the whole body. */
function issuePath(issue: z.core.$ZodIssue): string {
  return issue.path.map(String).join('.') || '(root)';
}

/** A response (or event) did not match the expected schema. `issues` lists what was wrong. */
export class SchemaValidationError extends CheckoutKitError {
  override name = 'SchemaValidationError';
  readonly issues: z.core.$ZodIssue[];
  constructor(message: string, issues: z.core.$ZodIssue[], options?: { cause?: unknown }) {
    const summary = issues
      .slice(0, 5)
      .map((issue) => `${issuePath(issue)}: ${issue.message}`)
      .join('; ');
    super(`${message}: ${summary}`, options);
    this.issues = issues;
  }
}

/** Which operation answered what that failed validation. */
export interface InvalidResponseErrorOptions {
  /** The operation, e.g. `payments.create`. */
  operation: string;
  /** The service's HTTP status (a 2xx: error statuses are `ApiError`s). */
  status: number;
  method: string;
  url: string;
  /** What was wrong; an answer that is not JSON is one issue at the root. */
  issues: z.core.$ZodIssue[];
  /** How the body is wrong, in words. @default 'does not match the spec' */
  problem?: string;
}

/**
 * The service answered with a success status but a body that is not what the spec describes (not
 * JSON, a field missing or malformed, e.g. a `checkoutUrl` that is not an http(s) URL): the
 * service misbehaved. Never retried. The checkout routes, `serve` and the console answer it with
 * 502 `invalid_response`; `fields` names what was wrong.
 */
export class InvalidResponseError extends SchemaValidationError {
  override name = 'InvalidResponseError';
  readonly operation: string;
  readonly status: number;
  readonly method: string;
  readonly url: string;
  /** The paths of the fields that were wrong, e.g. `['checkoutUrl']`; `(root)` for the whole body. */
  readonly fields: string[];
  /** What a server may show its caller: the operation and the fields, no URL, no values. */
  readonly summary: string;
  constructor(options: InvalidResponseErrorOptions) {
    super(
      `${options.operation}: the service's ${options.status} answer ${options.problem ?? 'does not match the spec'} (${options.method} ${options.url})`,
      options.issues,
    );
    this.operation = options.operation;
    this.status = options.status;
    this.method = options.method;
    this.url = options.url;
    this.fields = [...new Set(options.issues.map(issuePath))];
    const more = this.fields.length > 5 ? ` and ${this.fields.length - 5} more` : '';
    this.summary = `The payment service's answer to ${this.operation} does not match its spec (${this.fields.slice(0, 5).join(', ')}${more})`;
  }
}

/** Why a delivery failed verification, as the 401 answer, the log and the metrics name it. */
export type WebhookVerificationReason =
  'missing_headers' | 'bad_timestamp' | 'timestamp_too_old' | 'timestamp_too_new' | 'bad_signature' | 'no_secret' | 'parsed_body';

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

/** A `CheckoutError`'s code and its cause. */
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

/** Whether `value` is any error checkout-kit threw. */
export function isCheckoutKitError(value: unknown): value is CheckoutKitError {
  return value instanceof CheckoutKitError;
}

/** Whether `value` is a refusal by the service (`ApiError`). */
export function isApiError(value: unknown): value is ApiError {
  return value instanceof ApiError;
}

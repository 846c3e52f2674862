/**
 * Error classes of checkout-kit. Every error the toolkit throws is a `CheckoutKitError`;
 * the subclasses say which part failed and their messages say what to do next.
 * No message ever contains an API key or a secret (see `redact`).
 */
export { redact, registerSecret } from './redact.js';
export { messageOf } from './message-of.js';
export { describeFetchError, isBadPort } from './fetch-error.js';
export { isAbortedBy } from './aborted-by.js';
export { printable, readBidiEscapes, showBidiControls, terminalText } from './printable.js';
export { importOptionalPeer, MissingPeerError, OPTIONAL_PEERS, type OptionalPeer } from './optional-peer.js';
export {
  CheckoutKitError,
  ConfigError,
  NoStoreError,
  ApiError,
  NetworkError,
  TimeoutError,
  SchemaValidationError,
  InvalidResponseError,
  MoneyError,
  InvalidRequestError,
  WebhookVerificationError,
  StoreError,
  RedirectRejectedError,
  CheckoutError,
  CHECKOUT_ERROR_STATUS,
  isApiError,
  isCheckoutKitError,
  isOffSpec,
  isOutageStatus,
  isServiceOutage,
  offSpecElsewhere,
  offSpecRefusal,
  refusesRequest,
} from './errors.js';
export type {
  ApiErrorOptions,
  InvalidResponseErrorOptions,
  CheckoutErrorCode,
  CheckoutErrorOptions,
  StoreFailure,
  WebhookVerificationReason,
} from './errors.js';

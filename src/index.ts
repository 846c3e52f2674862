/**
 * checkout-kit: typed client, webhook receiver, once-only fulfillment, reconciler, checkout helper
 * and a local sandbox for the hosted crypto checkout service. This entry holds what a merchant's
 * backend uses: the clients, the receiver and its adapters, the fulfillment handlers and engine,
 * reconcile, the checkout helper, `openStore`, the configuration, money helpers, the resources'
 * schemas and the errors to catch. The rest is behind named entries: `checkout-kit/fastify` (the
 * fastify plugins), `checkout-kit/web` (the receiver on WebCrypto), `checkout-kit/store` (the store
 * backends and records), `checkout-kit/postgres` (the PostgreSQL store), `checkout-kit/operations`
 * (metrics, health, alerts, timelines) and `checkout-kit/testing` (test helpers and `check`).
 * Importing it loads no framework or database driver.
 * @module checkout-kit
 */
export {
  CheckoutKitError,
  ConfigError,
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
} from './errors/errors.js';
export type {
  ApiErrorOptions,
  InvalidResponseErrorOptions,
  CheckoutErrorCode,
  CheckoutErrorOptions,
  StoreFailure,
  WebhookVerificationReason,
} from './errors/errors.js';

export { MAX_DECIMALS, assertAmount, isAmount, compareAmounts, addAmounts, subtractAmounts, amountIsZero, minAmount, maxAmount } from './money/index.js';

export {
  PaymentSchema,
  PartnerPaymentSchema,
  InvoiceSchema,
  InvoiceDetailSchema,
  MerchantSchema,
  EventEnvelopeSchema,
  EVENT_TYPES,
  PAYMENT_EVENT_TYPES,
  INVOICE_EVENT_TYPES,
  parseEventEnvelope,
  isSampleEvent,
} from './schemas/index.js';
export type {
  Environment,
  Payment,
  PartnerPayment,
  PaymentDepositAddress,
  Invoice,
  InvoiceAddress,
  InvoiceToken,
  InvoiceDetail,
  InvoicePayment,
  InvoiceSettlement,
  Merchant,
  MerchantWallet,
  ErrorObject,
  CheckoutEvent,
  PaymentEvent,
  InvoiceEvent,
  EventOf,
  KnownEventType,
  PaymentEventType,
  InvoiceEventType,
} from './schemas/index.js';

export { loadConfig } from './config/index.js';
export type { CheckoutKitConfig, LoadConfigOptions, OutcomeRules } from './config/index.js';

export { createLogger, silentLogger } from './log/index.js';
export type { Logger } from './log/index.js';
export type { CreateLoggerOptions } from './log/logger.js';

export { CheckoutClient, PartnerClient, clientFromConfig, partnerFromConfig } from './client/index.js';
export type {
  CheckoutClientOptions,
  PartnerClientOptions,
  CreateOptions,
  CallOptions,
  TransportOptions,
  HttpCallRecord,
  RateLimiter,
  RateLimiterOptions,
  RequestSigner,
  SignableRequest,
  CreatePaymentInput,
  PartnerCreatePaymentInput,
  CreateInvoiceInput,
  CreateMerchantInput,
} from './client/index.js';

export { openStore } from './store/open.js';
export type { OpenStoreOptions } from './store/open.js';
export type { Store, Outcome, ResourceKind } from './store/index.js';

export { createReceiver } from './webhooks/receive/receiver.js';
export type { WebhookReceiver, WebhookEndpoint } from './webhooks/receive/receiver.js';
export type { ReceiverOptions, RetentionOptions } from './webhooks/receive/receiver-options.js';
export type { MerchantSecrets } from './webhooks/receive/merchant-secrets.js';
export type { WebhookInput } from './webhooks/receive/handle-delivery.js';
export type { WebhookResult } from './webhooks/receive/responses.js';
export type { EventName, EventHandler, ErrorHandler } from './webhooks/receive/event-handlers.js';
export { WebhookHandlerError } from './webhooks/receive/handler-error.js';
export type { EnvelopeMapper } from './webhooks/receive/parse-delivery.js';
export { createVerifier, verifyWebhook } from './webhooks/verify/verify.js';
export type { VerifierOptions, WebhookVerifier } from './webhooks/verify/verify.js';
export type { WebhookScheme } from './webhooks/schemes/scheme.js';
export { createNodeHandler } from './webhooks/adapters/node.js';
export type { NodeWebhookHandler, NodeWebhookRequest } from './webhooks/adapters/node.js';
export { createWebHandler } from './webhooks/adapters/web.js';
export { createKoaHandler } from './webhooks/adapters/koa.js';
export type { KoaWebhookContext } from './webhooks/adapters/koa.js';
export type { DeliveryInfo } from './webhooks/receive/run-handlers.js';
export type { DoctorOptions, Framework } from './webhooks/doctor/index.js';

export { classify, FulfillmentEngine, attachFulfillment, defineFulfillment, loadHandlers, NoFulfillmentModuleError } from './fulfillment/index.js';
export type {
  ClassifyOptions,
  Classifiable,
  Classification,
  StatusMeaning,
  HandlerOutcome,
  FulfillmentEngineOptions,
  FulfillmentContext,
  FulfillmentHandler,
  FulfillmentHandlers,
  ProcessInput,
  ProcessResult,
  RunResult,
  ResourceReader,
  EventSource,
} from './fulfillment/index.js';
export { recordHandlerCalls } from './check/record-handler-calls.js';
export type { RecordHandlerCallsOptions } from './check/record-handler-calls.js';

export { reconcile } from './reconcile/index.js';
export type { ReconcileOptions, ReconcileSummary } from './reconcile/index.js';

export { createCheckout } from './checkout/create-checkout.js';
export type { CheckoutDeps, CheckoutInput, CheckoutResult, Creator } from './checkout/create-checkout.js';
export { confirmReturn } from './checkout/confirm-return.js';
export type { OrderState, OrderStatus } from './checkout/confirm-return.js';
export { checkRedirectUrl } from './checkout/redirect-guard.js';
export type { RedirectGuardOptions } from './checkout/redirect-guard.js';
export { handleCheckoutRequest, handleReturnRequest } from './checkout/http.js';
export type { CheckoutHttpOptions, HttpAnswer } from './checkout/http.js';

export { onboardMerchant } from './partner/index.js';
export type { OnboardInput, OnboardDeps, OnboardResult } from './partner/index.js';

/**
 * checkout-kit: typed client, webhook receiver, once-only fulfillment, reconciler, checkout helper
 * and a local sandbox for the hosted crypto checkout service. Each capability lives in its own
 * folder; this file names the public surface. Importing it loads no framework or database driver:
 * the fastify plugins are also at `checkout-kit/fastify` (fastify is a peer dependency), the
 * PostgreSQL store at `checkout-kit/postgres`, and test helpers at `checkout-kit/testing`.
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
  redact,
} from './errors/index.js';
export type { ApiErrorOptions, InvalidResponseErrorOptions, CheckoutErrorCode, CheckoutErrorOptions, WebhookVerificationReason } from './errors/index.js';
export { PortInUseError } from './fastify/listen-on.js';

export { MAX_DECIMALS, assertAmount, isAmount, compareAmounts, addAmounts, subtractAmounts, amountIsZero, minAmount, maxAmount } from './money/index.js';

export {
  PaymentSchema,
  PartnerPaymentSchema,
  PaymentDepositAddressSchema,
  InvoiceSchema,
  InvoiceAddressSchema,
  InvoiceTokenSchema,
  InvoiceDetailSchema,
  InvoicePaymentSchema,
  InvoiceSettlementSchema,
  InvoiceListSchema,
  MerchantSchema,
  MerchantWalletSchema,
  ErrorObjectSchema,
  EventEnvelopeSchema,
  EVENT_TYPES,
  PAYMENT_EVENT_TYPES,
  INVOICE_EVENT_TYPES,
  parseEventEnvelope,
  SAMPLE_EVENT_PREFIX,
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
} from './schemas/index.js';

export { loadConfig, DEFAULT_STORE } from './config/index.js';
export type { CheckoutKitConfig, LoadConfigOptions } from './config/index.js';

export { createLogger, defaultLogger, silentLogger } from './log/index.js';
export type { Logger } from './log/index.js';

export {
  CheckoutClient,
  PartnerClient,
  RateLimiter,
  clientFromConfig,
  defaultRequestSigner,
  checkRequestSignature,
  MAX_IDEMPOTENCY_KEY_LENGTH,
} from './client/index.js';
export type {
  CheckoutClientOptions,
  PartnerClientOptions,
  CreateOptions,
  CallOptions,
  TransportOptions,
  RateLimiterOptions,
  RequestSigner,
  SignableRequest,
  CreatePaymentInput,
  PartnerCreatePaymentInput,
  CreateInvoiceInput,
  CreateMerchantInput,
} from './client/index.js';

export { MemoryStore, OUTCOME_RANK } from './store/index.js';
export type { Store, StoredEvent, Run, ResourceRecord, Outcome, ResourceKind, CheckoutAttempt, TenantMerchant, DeadLetter } from './store/index.js';

export {
  createReceiver,
  createVerifier,
  verifyWebhook,
  signWebhook,
  generateTestHeaders,
  newWebhookSecret,
  checkoutWebhooks,
  createNodeHandler,
  createWebHandler,
  createKoaHandler,
  createWebReceiver,
  createWebVerifier,
  verifyWebhookWeb,
  WebhookHandlerError,
  WEBHOOK_ERROR_STATUS,
} from './webhooks/index.js';
export type {
  WebhookReceiver,
  WebhookEndpoint,
  ReceiverOptions,
  RetentionOptions,
  WebhookInput,
  WebhookResult,
  EventName,
  EventHandler,
  ErrorHandler,
  EnvelopeMapper,
  VerifierOptions,
  WebhookScheme,
  SignWebhookOptions,
  CheckoutWebhooksOptions,
  NodeWebhookHandler,
  NodeWebhookRequest,
  KoaWebhookContext,
  WebReceiverOptions,
  EventSink,
} from './webhooks/index.js';

export {
  classify,
  FulfillmentEngine,
  attachFulfillment,
  defineFulfillment,
  loadHandlers,
  NoFulfillmentModuleError,
} from './fulfillment/index.js';
export type {
  ClassifyOptions,
  Classification,
  HandlerOutcome,
  FulfillmentEngineOptions,
  FulfillmentContext,
  FulfillmentHandler,
  FulfillmentHandlers,
  ProcessResult,
  ResourceReader,
} from './fulfillment/index.js';

export { runKeys, parseRunKey, retryFailed, HANDLER_OUTCOMES } from './runs/index.js';
export type { RunKey, EventRunKey, FulfillmentRunKey, ParsedRunKey, RetryFailedOptions } from './runs/index.js';

export { reconcile } from './reconcile/index.js';
export type { ReconcileOptions, ReconcileSummary } from './reconcile/index.js';

export { createCheckout, confirmReturn, checkRedirectUrl, checkoutRoutes, handleCheckoutRequest, handleReturnRequest } from './checkout/index.js';
export type {
  CheckoutInput,
  CheckoutResult,
  Creator,
  OrderStatus,
  OrderState,
  RedirectGuardOptions,
  CheckoutRoutesOptions,
  CheckoutHttpOptions,
  HttpAnswer,
} from './checkout/index.js';
export { onboardMerchant } from './partner/index.js';
export type { OnboardInput, OnboardDeps, OnboardResult } from './partner/index.js';

export { openStore } from './store/open.js';
export { SqliteStore } from './store/sqlite/sqlite-store.js';
// Also `checkout-kit/postgres`, which loads only the PostgreSQL store.
export { PostgresStore } from './store/postgres/index.js';
export type { PostgresStoreOptions } from './store/postgres/index.js';

export { describeDiagnosis, DAMAGES } from './webhooks/doctor/index.js';
export type { Diagnosis, DamageKind, DoctorOptions, Framework } from './webhooks/doctor/index.js';

export { runCheck, CHECK_SCENARIOS, CHECK_SCENARIO_NAMES, recordHandlerCalls, appendHandlerCall, readHandlerCalls, HandlerCallSchema } from './check/index.js';
export type { CheckOptions, CheckReport, ScenarioReport, CheckScenario, HandlerCall, RecordHandlerCallsOptions } from './check/index.js';

// Operating it: console, metrics, health, alerts, timelines.
export { checkoutConsole, maskEmail, maskEmails } from './console/index.js';
export type { ConsoleOptions, ActionOutcome, ActionName } from './console/index.js';
export { createMetrics, metricsRoute, observeDeliveries, ServiceCalls, VerificationLog } from './metrics/index.js';
export type { CheckoutMetrics, MetricsOptions, MetricsRouteOptions } from './metrics/index.js';
export { createHealth, healthRoutes } from './health/index.js';
export type { Health, HealthOptions, Readiness } from './health/index.js';
export { createAlertMonitor, ALERT_KINDS, alertText } from './alerts/index.js';
export type { Alert, AlertKind, AlertMonitor, AlertMonitorOptions } from './alerts/index.js';
export { createTimelineRecorder, readTimeline } from './timeline/index.js';
export type { Timeline, TimelineEntry, TimelineRecorder } from './timeline/index.js';
export { EngineObservers } from './fulfillment/index.js';
export type { EngineObserver, NewsObservation, HandlerObservation } from './fulfillment/index.js';
export { decideAccess, isLocalRequest } from './access/index.js';
export type { StoreSummary, Activity } from './store/index.js';

/** Typed, validated calls for every operation of the service. */
export { CheckoutClient } from './checkout-client.js';
export { clientFromConfig, configuresService, partnerFromConfig } from './from-config.js';
export type { CheckoutClientOptions, CreateOptions } from './checkout-client.js';
export { PartnerClient } from './partner-client.js';
export type { PartnerClientOptions } from './partner-client.js';
export { Transport } from './transport.js';
export { RateLimiter } from './rate-limiter.js';
export type { RateLimiterOptions } from './rate-limiter.js';
export type { TransportOptions, CallOptions, RequestAuth, HttpCallRecord } from './transport.js';
export { defaultRequestSigner, checkRequestSignature } from './signer.js';
export type { RequestSigner, SignableRequest } from './signer.js';
export { idempotencyKeyFor, MAX_IDEMPOTENCY_KEY_LENGTH } from './idempotency.js';
export { isRetryable, isRetryableStatus, parseRetryAfter } from './retry-policy.js';
export { CreatePaymentInputSchema, PartnerCreatePaymentInputSchema, CreateInvoiceInputSchema, CreateMerchantInputSchema } from './inputs.js';
export type { CreatePaymentInput, PartnerCreatePaymentInput, CreateInvoiceInput, CreateMerchantInput } from './inputs.js';

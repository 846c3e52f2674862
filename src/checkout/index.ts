/** Create payments and invoices once per order, redirect safely, confirm on return. */
export { createCheckout } from './create-checkout.js';
export type { CheckoutDeps, CheckoutInput, CheckoutResult, Creator } from './create-checkout.js';
export { confirmReturn } from './confirm-return.js';
export type { OrderState, OrderStatus } from './confirm-return.js';
export { checkRedirectUrl } from './redirect-guard.js';
export type { RedirectGuardOptions } from './redirect-guard.js';
export { orderIdempotencyKey, requestHash } from '../domain/idempotency.js';
export { handleCheckoutRequest, handleReturnRequest } from './http.js';
export type { CheckoutHttpOptions, HttpAnswer } from './http.js';
export { checkoutRoutes } from './adapters/fastify.js';
export type { CheckoutRoutesOptions } from './adapters/fastify.js';

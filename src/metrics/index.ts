/** Prometheus metrics of the receiver, the engine, the store and the service calls. */
export { createMetrics } from './create-metrics.js';
export type { CheckoutMetrics, MetricsOptions } from './create-metrics.js';
export { ServiceCalls } from './service-calls.js';
export type { ServiceCallCount } from './service-calls.js';
export { StoreSnapshots } from './store-snapshot.js';
export type { StoreSnapshot } from './store-snapshot.js';
export { deliveryLabel } from './delivery-label.js';
export { metricsRoute } from './fastify.js';
export type { MetricsRouteOptions } from './fastify.js';
export { observeDeliveries } from './observe-deliveries.js';
export { VerificationLog, verificationFailuresSince, RECEIVER_SUBJECT } from './verification-log.js';
export type { VerificationFailures } from './verification-log.js';

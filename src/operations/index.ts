/**
 * `checkout-kit/operations`: what watches a running checkout-kit, built without a web framework:
 * Prometheus metrics, liveness and readiness, alerts, each resource's timeline for the console,
 * the engine's observers that feed them, and `retryFailed` for runs given up. The fastify routes
 * that serve them are in `checkout-kit/fastify`.
 * @example
 * const observers = new EngineObservers();
 * const engine = new FulfillmentEngine({ store, client, handlers, observer: observers });
 * const metrics = createMetrics({ store, clock: engine.clock });
 * observers.add(metrics.engineObserver);
 * @module checkout-kit/operations
 */
export { EngineObservers } from '../fulfillment/engine-observer.js';
export type { EngineObserver, NewsObservation, HandlerObservation } from '../fulfillment/engine-observer.js';
export { createMetrics } from '../metrics/create-metrics.js';
export type { CheckoutMetrics, MetricsOptions } from '../metrics/create-metrics.js';
export { observeDeliveries } from '../metrics/observe-deliveries.js';
export { ServiceCalls } from '../metrics/service-calls.js';
export type { ServiceCallCount } from '../metrics/service-calls.js';
export { VerificationLog } from '../metrics/verification-log.js';
export { createHealth } from '../health/readiness.js';
export type { Health, HealthOptions, Readiness, StoreCheck, BacklogCheck } from '../health/readiness.js';
export { createAlertMonitor } from '../alerts/monitor.js';
export type { AlertMonitor, AlertMonitorOptions } from '../alerts/monitor.js';
export { ALERT_KINDS, alertText } from '../alerts/alert.js';
export type { Alert, AlertKind } from '../alerts/alert.js';
export { createTimelineRecorder } from '../timeline/recorder.js';
export type { TimelineRecorder } from '../timeline/recorder.js';
export { readTimeline } from '../timeline/read-timeline.js';
export type { Timeline, TimelineEntry } from '../timeline/read-timeline.js';
export { retryFailed } from '../runs/retry-failed.js';
export type { RetryFailedOptions } from '../runs/retry-failed.js';

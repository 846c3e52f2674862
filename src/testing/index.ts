/**
 * Helpers for merchants' own tests (`import { … } from 'checkout-kit/testing'`): realistic sample
 * resources, signed webhook deliveries, and a handler context, so fulfillment handlers and webhook
 * routes can be tested without the service; and `checkout-kit check`'s harness, to prove a whole
 * backend against the sandbox from code.
 * @module checkout-kit/testing
 */
export { samplePayment, sampleInvoice, sampleInvoiceDetail, sampleMerchant } from './samples.js';
export { sampleEvent, signedWebhook } from './webhooks.js';
export type { SignedWebhook, SignedWebhookOptions } from './webhooks.js';
export { fulfillmentContext } from './context.js';
export { signWebhook, generateTestHeaders, newWebhookSecret } from '../webhooks/verify/sign.js';
export type { SignWebhookOptions, TestHeadersOptions } from '../webhooks/verify/sign.js';
export { runCheck } from '../check/run-check.js';
export type { CheckOptions } from '../check/run-check.js';
export type { Evidence, Observed, ObservedCall } from '../check/evidence.js';
export { CHECK_SCENARIO_NAMES } from '../check/scenarios.js';
export type { CheckScenario, Expectation } from '../check/scenarios.js';
export type { SandboxHandle } from '../sandbox/start.js';
export type { SandboxCredentials, EnvironmentCredentials } from '../sandbox/credentials.js';
export type { SandboxEvent, DeliveryRecord } from '../sandbox/records.js';
export type { CheckReport, ScenarioReport, SentDelivery, ReconcileRun } from '../check/report.js';
export { HandlerCallSchema, appendHandlerCall, readHandlerCalls } from '../check/handler-calls.js';
export type { HandlerCall } from '../check/handler-calls.js';

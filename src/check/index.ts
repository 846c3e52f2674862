/**
 * `checkout-kit check`: prove a merchant's backend against every scenario (paid, partial, over,
 * under, expired, late, duplicated, reordered, a lost webhook, a stale signature, a mislabelled
 * event) through the sandbox, and tell per scenario what went wrong and what to change.
 */
export { runCheck } from './run-check.js';
export type { CheckOptions } from './run-check.js';
export { CHECK_SCENARIOS, CHECK_SCENARIO_NAMES, PARTNER_SCENARIO_NAMES, isCheckScenario } from './scenarios.js';
export type { CheckScenario, CheckScenarioSpec, Expectation } from './scenarios.js';
export { DELIVERY_PLANS, STALE_SECONDS } from './delivery-plans.js';
export type { DeliveryPlan, PlanSpec } from './delivery-plans.js';
export type { CheckReport, ScenarioReport, SentDelivery, ReconcileRun } from './report.js';
export { chooseEvidence } from './evidence.js';
export type { Evidence, Observed, ObservedCall } from './evidence.js';
export { HandlerCallSchema, appendHandlerCall, readHandlerCalls } from './handler-calls.js';
export type { HandlerCall } from './handler-calls.js';
export { recordHandlerCalls } from './record-handler-calls.js';
export type { RecordHandlerCallsOptions } from './record-handler-calls.js';
export { reconcileRunner } from './reconcile-runner.js';
export type { ReconcileRunnerOptions } from './reconcile-runner.js';
export { backendEnv } from './backend-env.js';
export { startChild } from './child-process.js';
export type { RunningChild, Command } from './child-process.js';

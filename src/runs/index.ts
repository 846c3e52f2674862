/** Leased work: the one runner (`executeRun`), its backoff, lease renewal and retry by command. */
export { runKeys, parseRunKey, eventIdOf, EVENT_RUN_PREFIX, HANDLER_OUTCOMES, isHandlerOutcome, RESOURCE_KINDS, RUN_STATUSES } from '../domain/index.js';
export { resourceRuns } from './resource-runs.js';
export type { RunKey, EventRunKey, FulfillmentRunKey, ParsedRunKey, HandlerOutcome } from '../domain/index.js';
export { executeRun, COMPLETION_RETRIES } from './execute-run.js';
export type { AttemptResult, ExecuteRunOptions, FailureDecision, RunResult, RunSettings } from './execute-run.js';
export { retryFailed } from './retry-failed.js';
export type { RetryFailedOptions } from './retry-failed.js';
export { backoffDelay } from './backoff.js';
export { defaultOwner } from './default-owner.js';
export { keepRenewing } from './keep-renewing.js';
export type { KeepRenewingOptions } from './keep-renewing.js';
export { numberOption } from './number-option.js';
export { createRunLoop } from './run-loop.js';
export type { RunLoop, RunLoopOptions, Task, TaskContext, UnitOutcome } from './run-loop.js';

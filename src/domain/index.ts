/** The vocabulary every capability speaks: resources, outcomes, news sources, run keys and statuses. */
export { OUTCOME_RANK, HANDLER_OUTCOMES, RESOURCE_KINDS, isHandlerOutcome, isResourceKind } from './resources.js';
export type { ResourceKind, Outcome, NewsSource, HandlerOutcome } from './resources.js';
export { runKeys, fulfillmentKeySql, parseRunKey, eventIdOf, EVENT_RUN_PREFIX, RUN_STATUSES } from './run-keys.js';
export { MAX_ORDER_KEY_LENGTH, TENANT_ID_PATTERN, TENANT_ID_RULE, tenantOfOrderKey, tenantOrderKey } from './tenants.js';
export type { RunKey, EventRunKey, FulfillmentRunKey, ParsedRunKey, RunStatus } from './run-keys.js';

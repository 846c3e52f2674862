/** Outcome classification and the once-only fulfillment engine. */
export { classify, DEFAULT_STATUS_MAP } from './outcome.js';
export type { ClassifyOptions, Classifiable, Classification, HandlerOutcome, StatusMeaning } from './outcome.js';
export { FulfillmentEngine } from './engine.js';
export { normalizeEngineOptions } from './engine-options.js';
export type { FulfillmentEngineOptions, NormalizedEngineOptions, ResourceReader } from './engine-options.js';
export { EngineObservers } from './engine-observer.js';
export type { EngineObserver, NewsObservation, HandlerObservation } from './engine-observer.js';
export { attachFulfillment } from './attach.js';
export type { EventSource } from './attach.js';
export type { ProcessInput, ProcessResult, RunResult } from './engine.js';
export { defineFulfillment, loadHandlers, handlerFor, assertHandlers, DEFAULT_HANDLER_FILES, NoFulfillmentModuleError } from './handlers.js';
export type { FulfillmentContext, FulfillmentHandler, FulfillmentHandlers } from './handlers.js';

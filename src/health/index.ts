/** Liveness and readiness of a checkout-kit process. */
export { createHealth } from './readiness.js';
export type { BacklogCheck, Health, HealthOptions, Readiness, StoreCheck } from './readiness.js';
export { healthRoutes } from './fastify.js';

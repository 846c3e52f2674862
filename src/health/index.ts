/** Liveness and readiness of a checkout-kit process (issue 15). */
export { createHealth } from './readiness.js';
export type { BacklogCheck, Health, HealthOptions, Readiness, StoreCheck } from './readiness.js';
export { healthRoutes } from './fastify.js';

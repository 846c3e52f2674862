/**
 * The local sandbox of the checkout service (like stripe-mock): every operation of the service,
 * a hosted checkout page, simulation endpoints and a webhook sender with fault injection.
 */
export { startSandbox, MAX_DELIVERIES } from './start.js';
export type { SandboxHandle } from './start.js';
export { resolveOptions } from './options.js';
export type { SandboxOptions, WebhookFaults, WebhookRetry } from './options.js';
export { CREDENTIALS_FILE } from './credentials.js';
export type { SandboxCredentials, EnvironmentCredentials } from './credentials.js';
export { DEFAULT_NETWORKS } from './networks.js';
export type { NetworkSpec, TokenSpec } from './networks.js';
export { STATUSES } from './records.js';
export type { Status, SandboxEvent, DeliveryRecord } from './records.js';

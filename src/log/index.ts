/**
 * Logging is injectable: pass any pino-compatible logger (fastify's `request.log` works). The
 * default logger writes JSON lines to stderr and scrubs secrets from every message.
 */
export { createLogger, defaultLogger, silentLogger } from './logger.js';
export { consoleLogger } from './console-logger.js';
export type { Logger } from './logger.js';
export { lineGate } from './line-gate.js';
export type { LineGate } from './line-gate.js';

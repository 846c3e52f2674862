/** The operator console: overview, lists, timelines and actions, server-rendered. */
export { checkoutConsole } from './fastify.js';
export { consoleContext } from './context.js';
export type { ActionOutcome, ConsoleOptions } from './context.js';
export { ACTIONS } from './actions.js';
export type { ActionName } from './actions.js';
export { ConsoleRequestError } from './request-error.js';
export { html, raw, escapeHtml, SafeHtml } from './html.js';
export { maskEmail, maskEmails } from './mask.js';

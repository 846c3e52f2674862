/** Who may read the operator's console and metrics: whoever has the console token, or without one, this machine only. */
export { decideAccess, readCookie, SESSION_COOKIE } from './access.js';
export type { AccessDecision, AccessRequest } from './access.js';
export { isLocalRequest, isLoopbackAddress, isLoopbackHost, LOOPBACK_URL_HOSTS } from './local-request.js';
export { sessionValue, tokenMatches } from './token.js';
export { accessHook } from './fastify.js';

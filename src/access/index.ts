/** Who may read the operator's console and metrics: this machine, or whoever has the console token. */
export { decideAccess, readCookie, SESSION_COOKIE } from './access.js';
export type { AccessDecision, AccessRequest } from './access.js';
export { isLocalRequest, isLoopbackAddress, isLoopbackHost, LOOPBACK_URL_HOSTS } from './local-request.js';
export { sessionValue, tokenMatches } from './token.js';
export { accessHook } from './fastify.js';

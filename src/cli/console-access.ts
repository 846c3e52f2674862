import { isLoopbackHost } from '../access/index.js';

/** How a console listening on `host` can be reached, for the start-up line (never the token). */
export function consoleAccess(host: string, token: string | undefined): string {
  if (token !== undefined) return 'anyone with CHECKOUT_CONSOLE_TOKEN (this machine too)';
  return isLoopbackHost(host) ? 'this machine only' : 'from this machine only: set CHECKOUT_CONSOLE_TOKEN to let others in';
}

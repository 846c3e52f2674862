import { isAddressedToThisMachine, isLocalRequest } from './local-request.js';
import { sessionValue, tokenMatches } from './token.js';

/** Name of the cookie a browser signs in with (`POST <console>/login`). */
export const SESSION_COOKIE = 'checkout_kit_console';

/** What a request shows of itself. */
export interface AccessRequest {
  remoteAddress: string | undefined;
  headers: Record<string, string | string[] | undefined>;
}

/** How a request was let in, or why not (the message says what to do; it never contains the token). */
export type AccessDecision = { ok: true; via: 'loopback' | 'token' } | { ok: false; message: string };

function header(headers: AccessRequest['headers'], name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** The value of cookie `name` in a `Cookie` header. */
export function readCookie(cookieHeader: string | undefined, name: string): string | undefined {
  for (const part of (cookieHeader ?? '').split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === name) return value.join('=');
  }
  return undefined;
}

/**
 * The console's and `/metrics`' rule. With a `token` (`CHECKOUT_CONSOLE_TOKEN`), every request needs
 * it, this machine's too, as `Authorization: Bearer …` or the session cookie, compared in constant
 * time: a proxy on this host that sends no forwarding header connects from loopback for every
 * visitor, so the socket's address proves nothing once a token is set. Without a token, only this
 * machine gets in (`isLocalRequest`), and only by a loopback name (`isAddressedToThisMachine`).
 */
export function decideAccess(request: AccessRequest, token: string | undefined): AccessDecision {
  if (token === undefined) {
    if (!isLocalRequest(request.remoteAddress, request.headers))
      return { ok: false, message: 'This page answers only requests from this machine: set CHECKOUT_CONSOLE_TOKEN to open it to others, then send the token.' };
    if (isAddressedToThisMachine(header(request.headers, 'host'))) return { ok: true, via: 'loopback' };
    return {
      ok: false,
      message:
        "This page answers only requests addressed to this machine as 127.0.0.1, localhost or [::1] (another host name here is how another site's page reaches it): open it at one of those, or set CHECKOUT_CONSOLE_TOKEN.",
    };
  }
  const bearer = /^Bearer\s+(.+)$/i.exec(header(request.headers, 'authorization') ?? '')?.[1]?.trim();
  const cookie = readCookie(header(request.headers, 'cookie'), SESSION_COOKIE);
  if (tokenMatches(bearer, token) || tokenMatches(cookie, sessionValue(token))) return { ok: true, via: 'token' };
  return {
    ok: false,
    message: 'Missing or wrong console token: send CHECKOUT_CONSOLE_TOKEN as "Authorization: Bearer <token>", or sign in on the console\'s login page.',
  };
}

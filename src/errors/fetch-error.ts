import { messageOf } from './message-of.js';

/** Whether fetch refused the port it was to connect to (one of the Fetch standard's "bad ports"), saying only "bad port". */
export function isBadPort(error: unknown): boolean {
  return (error as { cause?: { message?: unknown } }).cause?.message === 'bad port';
}

/**
 * The network-level reason of a failed fetch, e.g. `ECONNREFUSED`, instead of undici's "fetch
 * failed". A port fetch will not connect to is named as such, with what to do; given the `url`
 * asked for, the message names it (the refused port may also be one it redirected to).
 */
export function describeFetchError(error: unknown, url?: string): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
  if (typeof cause?.code === 'string') return cause.code;
  if (isBadPort(error)) {
    const where = url === undefined ? 'the address' : `${url} (or an address it redirected to)`;
    return `fetch refuses to connect to ${where}: its port is one of the Fetch standard's "bad ports" (e.g. 6000, 6665-6669, 10080); let the server listen on another port`;
  }
  if (typeof cause?.message === 'string') return cause.message;
  return messageOf(error);
}

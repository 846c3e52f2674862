import { messageOf } from './message-of.js';

/**
 * The network-level reason of a failed fetch, e.g. `ECONNREFUSED`, instead of undici's "fetch
 * failed". Given the `url`, a port fetch will not connect to says so and what to do.
 */
export function describeFetchError(error: unknown, url?: string): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } }).cause;
  if (typeof cause?.code === 'string') return cause.code;
  if (cause?.message === 'bad port') {
    const port = url === undefined ? undefined : URL.canParse(url) ? new URL(url).port : undefined;
    return `fetch refuses to connect to port ${port || 'of this address'} (one of the Fetch standard's "bad ports", e.g. 6000, 6665-6669, 10080): let the server listen on another port`;
  }
  if (typeof cause?.message === 'string') return cause.message;
  return messageOf(error);
}

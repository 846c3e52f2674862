import { ApiError, NetworkError, TimeoutError } from '../errors/index.js';

/** Statuses worth another try: the same key still in flight, rate limited, or a server fault. */
export function isRetryableStatus(status: number): boolean {
  return status === 409 || status === 429 || status >= 500;
}

/** Network failures, timeouts and retryable statuses are retried; nothing else is. */
export function isRetryable(error: unknown): boolean {
  if (error instanceof NetworkError || error instanceof TimeoutError) return true;
  return error instanceof ApiError && isRetryableStatus(error.status);
}

/** Parse `Retry-After` (seconds or an HTTP date) into milliseconds, capped at `maxMs`. */
export function parseRetryAfter(value: string | null, maxMs = 60_000, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value);
  const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(value) - now;
  if (!Number.isFinite(ms) || ms < 0) return undefined;
  return Math.min(ms, maxMs);
}

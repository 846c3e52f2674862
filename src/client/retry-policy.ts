import { ApiError, isOutageStatus, isServiceOutage } from '../errors/index.js';

/** Statuses worth another try: the same key still in flight (409), or an outage's (`isOutageStatus`). */
export function isRetryableStatus(status: number): boolean {
  return status === 409 || isOutageStatus(status);
}

/** An outage (`isServiceOutage`: no answer, a rate limit, a server fault) or a key still in flight is retried; nothing else is. */
export function isRetryable(error: unknown): boolean {
  return isServiceOutage(error) || (error instanceof ApiError && error.status === 409);
}

/** Parse `Retry-After` (seconds or an HTTP date) into milliseconds, capped at `maxMs`. */
export function parseRetryAfter(value: string | null, maxMs = 60_000, now = Date.now()): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value);
  const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(value) - now;
  if (!Number.isFinite(ms) || ms < 0) return undefined;
  return Math.min(ms, maxMs);
}

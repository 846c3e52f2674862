import { createHash } from 'node:crypto';
import type { ResourceKind } from '../store/index.js';

/**
 * The Idempotency-Key of an order's create call: derived from the order id and the attempt number
 * alone, so any retry, double click, second server or restart after a crash sends the same key.
 * Attempt 1 keeps the form of the keys written before attempts were numbered; a later attempt,
 * made after the service refused the order's create, gets a key of its own (`ck-<kind>-attempt<n>-
 * sha256-<hash of the order id>`): the service may remember the refused body under the old key.
 */
export function orderIdempotencyKey(kind: ResourceKind, orderId: string, attempt = 1): string {
  const hashed = createHash('sha256').update(orderId).digest('hex');
  // A later attempt's key is always hashed: `ck-payment-A~2` would also be order `A~2`'s first key.
  if (attempt !== 1) return `ck-${kind}-attempt${attempt}-sha256-${hashed}`;
  const plain = `ck-${kind}-${orderId}`;
  // Keep readable keys readable; hash the ones that would pass the service's 255 limit or carry odd bytes.
  if (plain.length <= 200 && /^[\x21-\x7e]+$/.test(plain)) return plain;
  return `ck-${kind}-sha256-${hashed}`;
}

/** A stable hash of a request body (keys sorted), to spot the same order sent with other values. */
export function requestHash(body: Record<string, unknown>): string {
  const canonical = JSON.stringify(Object.keys(body).sort().map((key) => [key, body[key]]));
  return createHash('sha256').update(canonical).digest('hex');
}

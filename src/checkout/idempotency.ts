import { createHash } from 'node:crypto';
import type { ResourceKind } from '../store/index.js';

/**
 * The Idempotency-Key of an order's create call: derived from the order id and the attempt number
 * alone, so any retry, double click, second server or restart after a crash sends the same key.
 * Attempt 1 has no suffix (the keys of stores written before attempts were numbered); a later
 * attempt, made after the service refused the order's create, ends `~<number>`: the service may
 * remember the refused body under the old key.
 */
export function orderIdempotencyKey(kind: ResourceKind, orderId: string, attempt = 1): string {
  const suffix = attempt === 1 ? '' : `~${attempt}`;
  const plain = `ck-${kind}-${orderId}${suffix}`;
  // Keep readable keys readable; hash the ones that would pass the service's 255 limit or carry odd bytes.
  if (plain.length <= 200 && /^[\x21-\x7e]+$/.test(plain)) return plain;
  return `ck-${kind}-sha256-${createHash('sha256').update(orderId).digest('hex')}${suffix}`;
}

/** A stable hash of a request body (keys sorted), to spot the same order sent with other values. */
export function requestHash(body: Record<string, unknown>): string {
  const canonical = JSON.stringify(Object.keys(body).sort().map((key) => [key, body[key]]));
  return createHash('sha256').update(canonical).digest('hex');
}

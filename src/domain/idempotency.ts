import { createHash } from 'node:crypto';
import type { ResourceKind } from './resources.js';

/**
 * The Idempotency-Key of an order's create call: derived from the order id and the attempt number
 * alone, so any retry, double click, second server or restart after a crash sends the same key.
 */
export function orderIdempotencyKey(kind: ResourceKind, orderId: string, attempt = 1): string {
  return createOnceKey(kind, orderId, attempt);
}

/** The Idempotency-Key of the create call of a partner tenant's merchant, try `attempt` (as an order's: from the tenant id and the try alone). */
export function tenantMerchantKey(tenantId: string, attempt = 1): string {
  return createOnceKey('merchant', tenantId, attempt);
}

/**
 * The Idempotency-Key of the create call of `what` (`payment`, `invoice`, `merchant`) for `id` (an
 * order id, a tenant id), try `attempt`. Try 1 keeps the form of the keys written before tries were
 * numbered; a later try, made after the service refused the create, gets a key of its own
 * (`ck-<what>-attempt<n>-sha256-<hash of the id>`): the service may remember the refused body under the old key.
 */
export function createOnceKey(what: string, id: string, attempt = 1): string {
  const hashed = createHash('sha256').update(id).digest('hex');
  // A later try's key is always hashed: `ck-payment-A~2` would also be order `A~2`'s first key.
  if (attempt !== 1) return `ck-${what}-attempt${attempt}-sha256-${hashed}`;
  const plain = `ck-${what}-${id}`;
  // Keep readable keys readable; hash the ones that would pass the service's 255 limit or carry odd bytes,
  // and an id shaped like a hashed key's tail (`sha256-<hex>`), which would be another id's hashed key.
  if (plain.length <= 200 && /^[\x21-\x7e]+$/.test(plain) && !/^(attempt\d+-)?sha256-/.test(id)) return plain;
  return `ck-${what}-sha256-${hashed}`;
}

/** A stable hash of a request body (keys sorted), to spot the same order sent with other values. */
export function requestHash(body: Record<string, unknown>): string {
  const canonical = JSON.stringify(
    Object.keys(body)
      .sort()
      .map((key) => [key, body[key]]),
  );
  return createHash('sha256').update(canonical).digest('hex');
}

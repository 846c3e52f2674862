import { randomUUID } from 'node:crypto';
import { InvalidRequestError } from '../errors/index.js';

/** The spec's limit on Idempotency-Key length. */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/**
 * The key for one create call: the caller's, checked, or a new UUID. Called once per call, before
 * any retry, so every retry of that call sends the same key.
 */
export function idempotencyKeyFor(given: string | undefined): string {
  if (given === undefined) return randomUUID();
  if (typeof given !== 'string' || given.trim() === '') {
    throw new InvalidRequestError('idempotencyKey must be a non-empty string (or omit it to have one generated).');
  }
  if (given.length > MAX_IDEMPOTENCY_KEY_LENGTH) {
    throw new InvalidRequestError(
      `idempotencyKey is ${given.length} characters; the service accepts at most ${MAX_IDEMPOTENCY_KEY_LENGTH}. Use a shorter key, e.g. a hash of your order id.`,
    );
  }
  return given;
}

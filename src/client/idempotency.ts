import { randomUUID } from 'node:crypto';
import { InvalidRequestError } from '../errors/index.js';

/** The spec's limit on Idempotency-Key length. */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/** Printable ASCII: what an HTTP header value carries unchanged (fetch refuses the rest). */
const HEADER_SAFE = /^[\x20-\x7e]*$/;

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
  // Checked here, not left to fetch: its TypeError for a bad header looked like a network failure
  // and was retried five times as "could not reach the service".
  if (!HEADER_SAFE.test(given)) {
    const index = [...given].findIndex((char) => !HEADER_SAFE.test(char));
    throw new InvalidRequestError(
      `idempotencyKey has a character HTTP headers cannot carry (${JSON.stringify([...given][index])} at position ${index}); use printable ASCII only, e.g. a hex or base64url hash of your order id.`,
    );
  }
  if (given.trim() !== given) {
    throw new InvalidRequestError('idempotencyKey starts or ends with whitespace, which HTTP strips in transit; trim it, so the key sent is the key you keep.');
  }
  return given;
}

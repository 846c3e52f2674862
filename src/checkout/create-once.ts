import { ApiError, InvalidRequestError, isOffSpec } from '../errors/index.js';

/** One numbered try at creating something at the service exactly once. */
interface CreateTry {
  status: 'sending' | 'created' | 'refused';
  number: number;
}

/**
 * The standing try of one thing to create (an order's payment, a tenant's merchant): the one
 * stored, or a new one. After a refusal the next number is put, with its own key; a concurrent
 * caller that put it first wins and both use its key.
 */
export async function standingTry<T extends CreateTry>(
  get: () => Promise<T | undefined>,
  put: (number: number) => Promise<{ inserted: boolean; stored: T }>,
): Promise<{ inserted: boolean; stored: T }> {
  for (;;) {
    const current = await get();
    if (current && current.status !== 'refused') return { inserted: false, stored: current };
    const result = await put(current ? current.number + 1 : 1);
    // Refused meanwhile by another caller's try: take the next number.
    if (result.stored.status !== 'refused') return result;
  }
}

/**
 * Whether the service answered that it will not create this request (400, 422 and other 4xx but
 * 409 "in flight" and 429 "slow down", with the spec's error object): then nothing exists at the
 * service. A timeout, a 5xx, a network error or a 4xx off the spec (an HTML page, an empty body:
 * not the service's contract speaking) leaves the result unknown, and the try (with its key) must stand.
 */
export function isDefiniteRefusal(error: unknown): boolean {
  if (error instanceof InvalidRequestError) return true;
  return error instanceof ApiError && !isOffSpec(error) && error.status >= 400 && error.status < 500 && error.status !== 409 && error.status !== 429;
}

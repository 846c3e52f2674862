import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Constant-time comparison of a presented token with the configured one. Both are hashed first,
 * so neither the length nor a common prefix of the secret leaks through timing.
 */
export function tokenMatches(given: string | undefined, expected: string): boolean {
  if (given === undefined) return false;
  const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();
  return timingSafeEqual(digest(given), digest(expected));
}

/**
 * What the console's session cookie holds: derived from the token, never the token itself, so a
 * cookie read off a browser does not give away the token that `/metrics` scrapers use elsewhere.
 */
export function sessionValue(token: string): string {
  return createHmac('sha256', token).update('checkout-kit console session').digest('base64url');
}

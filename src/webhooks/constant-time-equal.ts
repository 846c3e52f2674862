/**
 * Constant-time comparison of two encoded signatures, without `node:crypto` (the WebCrypto path's
 * `safeEqual`). Time depends only on the lengths, and only the expected length, which is public,
 * can leak. Encoded strings are compared for the same reason as in `safeEqual`: lenient base64.
 */
export function constantTimeEqual(given: string, expected: string): boolean {
  if (given.length !== expected.length) return false;
  let difference = 0;
  for (let i = 0; i < expected.length; i += 1) difference |= given.charCodeAt(i) ^ expected.charCodeAt(i);
  return difference === 0;
}

/**
 * Constant-time comparison of two encoded signatures, without `node:crypto` so that the Node and
 * the Web verifier share it. Time depends only on the lengths, and only the expected length, which
 * is public, can leak. The encoded strings are compared, not the decoded bytes, because base64
 * decoding is lenient: two different strings can decode alike.
 */
export function constantTimeEqual(given: string, expected: string): boolean {
  if (given.length !== expected.length) return false;
  let difference = 0;
  for (let i = 0; i < expected.length; i += 1) difference |= given.charCodeAt(i) ^ expected.charCodeAt(i);
  return difference === 0;
}

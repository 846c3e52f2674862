import { timingSafeEqual } from 'node:crypto';

/**
 * Constant-time comparison of two encoded signatures. The encoded strings are compared (not the
 * decoded bytes) because base64 decoding is lenient: two different strings can decode alike.
 * Only the expected length leaks, which is public anyway.
 */
export function safeEqual(given: string, expected: string): boolean {
  const a = Buffer.from(given, 'latin1');
  const b = Buffer.from(expected, 'latin1');
  return a.length === b.length && timingSafeEqual(a, b);
}

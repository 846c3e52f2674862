import { createHmac } from 'node:crypto';

/**
 * HMAC of `prefix` followed by the raw body. The body is fed as is (a Buffer, or a string that
 * crypto encodes as UTF-8): it is never re-serialised, so the bytes signed are the bytes received.
 */
export function hmacDigest(
  algorithm: 'sha256' | 'sha512',
  key: Buffer,
  prefix: string,
  body: Buffer | string,
  encoding: 'hex' | 'base64',
): string {
  const hmac = createHmac(algorithm, key);
  if (prefix) hmac.update(prefix);
  hmac.update(body);
  return hmac.digest(encoding);
}

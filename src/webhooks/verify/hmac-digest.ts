import { createHmac } from 'node:crypto';

/**
 * HMAC of `prefix` followed by the raw body, with Node's crypto. The body is fed as is (bytes, or a
 * string that crypto encodes as UTF-8): it is never re-serialised, so the bytes signed are the
 * bytes received. `web-hmac.ts` is the same on `crypto.subtle`.
 */
export function hmacDigest(algorithm: 'sha256' | 'sha512', key: Uint8Array, prefix: string, body: Uint8Array | string, encoding: 'hex' | 'base64'): string {
  const hmac = createHmac(algorithm, key);
  if (prefix) hmac.update(prefix);
  hmac.update(body);
  return hmac.digest(encoding);
}

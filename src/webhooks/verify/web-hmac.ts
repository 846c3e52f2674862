import { base64Encode, hexEncode } from './byte-encodings.js';
import { utf8Bytes } from './utf8.js';

const HASH = { sha256: 'SHA-256', sha512: 'SHA-512' } as const;

/** A `crypto.subtle` key, named through `crypto` so the types need neither the DOM lib nor `node:crypto`. */
export type HmacKey = Awaited<ReturnType<typeof crypto.subtle.importKey>>;

/** An HMAC key for `crypto.subtle`, imported once per secret. */
export function importHmacKey(key: Uint8Array, algorithm: 'sha256' | 'sha512'): Promise<HmacKey> {
  return crypto.subtle.importKey('raw', key as Uint8Array<ArrayBuffer>, { name: 'HMAC', hash: HASH[algorithm] }, false, ['sign']);
}

/**
 * `hmacDigest` on WebCrypto: HMAC of `prefix` followed by the raw body, encoded as Node would. The
 * body is fed byte for byte (a string as its UTF-8), never re-serialised.
 */
export async function webHmacDigest(key: HmacKey, prefix: string, body: Uint8Array | string, encoding: 'hex' | 'base64'): Promise<string> {
  let data: Uint8Array;
  if (typeof body === 'string') data = utf8Bytes(prefix + body);
  else {
    const head = utf8Bytes(prefix);
    data = new Uint8Array(head.byteLength + body.byteLength);
    data.set(head, 0);
    data.set(body, head.byteLength);
  }
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, data as Uint8Array<ArrayBuffer>));
  return encoding === 'hex' ? hexEncode(mac) : base64Encode(mac);
}

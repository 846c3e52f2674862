/**
 * Base64 and hex without `Buffer`, for the WebCrypto path. `atob` / `btoa` exist in every runtime
 * checkout-kit supports (Node ≥ 16, Bun, Deno, workerd, browsers).
 */

/** Standard base64 (with padding), as Node's `digest('base64')` writes it. */
export function base64Encode(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

/**
 * Decode base64 as leniently as `Buffer.from(text, 'base64')` does for well-formed characters:
 * padding optional, a dangling last character (six bits, no whole byte) ignored. The caller checks
 * the character set.
 */
export function base64Decode(text: string): Uint8Array {
  let unpadded = text.replace(/=+$/, '');
  if (unpadded.length % 4 === 1) unpadded = unpadded.slice(0, -1);
  const binary = atob(unpadded);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));

/** Lower-case hex, as Node's `digest('hex')` writes it. */
export function hexEncode(bytes: Uint8Array): string {
  let out = '';
  for (const byte of bytes) out += HEX[byte];
  return out;
}

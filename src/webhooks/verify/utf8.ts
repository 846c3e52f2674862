/**
 * UTF-8 through the Web's TextEncoder / TextDecoder, so the receiver's core runs where there is no
 * `Buffer` (Cloudflare Workers, edge runtimes). Node implements both natively; they are as fast as
 * `Buffer` for bodies of webhook size.
 */
const encoder = new TextEncoder();
const strict = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const lenient = new TextDecoder('utf-8', { ignoreBOM: true });

export function utf8Bytes(text: string): Uint8Array {
  return encoder.encode(text);
}

/** The text of `bytes`, or undefined when they are not UTF-8. A BOM is kept: it is part of the signed bytes. */
export function utf8Text(bytes: Uint8Array): string | undefined {
  try {
    return strict.decode(bytes);
  } catch {
    return undefined;
  }
}

/** The text of `bytes`, invalid sequences replaced by U+FFFD (for logs and dead letters only). */
export function utf8Lenient(bytes: Uint8Array): string {
  return lenient.decode(bytes);
}

/** Size in bytes of a body as received: its length, or a string's UTF-8 length. */
export function byteLength(body: Uint8Array | string): number {
  return typeof body === 'string' ? encoder.encode(body).byteLength : body.byteLength;
}

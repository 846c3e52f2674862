import { createHmac, timingSafeEqual } from 'node:crypto';

/** What a request signer sees: the exact bytes that will be sent. */
export interface SignableRequest {
  method: string;
  /**
   * The path and query as they go on the wire (no host), including any path prefix of the base
   * URL: with base URL `https://host/api`, `/api/v1/payments?x=1`.
   */
  path: string;
  /** Raw body as sent ('' for none). */
  body: string;
  /** Signing secret (`svc_ms_…` or `svc_ps_…`). */
  secret: string;
  /** Unix seconds. @default now */
  timestamp?: number;
}

/** Produces the `X-Request-Signature` header value. Replace it if the service's scheme differs. */
export type RequestSigner = (request: SignableRequest) => string;

/**
 * The default `X-Request-Signature`: `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<METHOD>.<path>.<body>")>`.
 */
export const defaultRequestSigner: RequestSigner = ({ method, path, body, secret, timestamp }) => {
  const t = timestamp ?? Math.floor(Date.now() / 1000);
  const mac = createHmac('sha256', secret).update(`${t}.${method.toUpperCase()}.${path}.${body}`).digest('hex');
  return `t=${t},v1=${mac}`;
};

export interface VerifyRequestSignatureOptions extends Omit<SignableRequest, 'timestamp'> {
  header: string | undefined;
  /** Allowed clock difference in seconds, both ways. @default 300 */
  toleranceSeconds?: number;
  /** @default Date.now() */
  now?: number;
}

/**
 * Check an `X-Request-Signature` made by `defaultRequestSigner` (used by the sandbox and by tests).
 * Returns a reason string when it fails, undefined when it verifies.
 */
export function checkRequestSignature(options: VerifyRequestSignatureOptions): string | undefined {
  const { header } = options;
  if (!header) return 'X-Request-Signature header is missing';
  const parts = Object.fromEntries(
    header.split(',').map((part) => {
      const index = part.indexOf('=');
      return [part.slice(0, index).trim(), part.slice(index + 1).trim()];
    }),
  );
  const t = Number(parts.t);
  if (!parts.t || !Number.isInteger(t)) return 'X-Request-Signature has no valid t= timestamp';
  const now = Math.floor((options.now ?? Date.now()) / 1000);
  if (Math.abs(now - t) > (options.toleranceSeconds ?? 300)) return 'X-Request-Signature timestamp is outside the tolerance';
  const expected = defaultRequestSigner({ ...options, timestamp: t }).split('v1=')[1] ?? '';
  // The whole string is compared: Buffer.from(hex) stops at the first non-hex character, which
  // let a valid signature with trailing garbage through.
  const a = Buffer.from(expected, 'utf8');
  const b = Buffer.from(String(parts.v1 ?? '').toLowerCase(), 'utf8');
  if (a.length !== b.length || !timingSafeEqual(a, b)) return 'X-Request-Signature does not match';
  return undefined;
}

import { describeFetchError } from '../errors/index.js';
import type { WebhookScheme } from '../webhooks/scheme.js';
import { signWebhook } from '../webhooks/sign.js';

/** Where and how a signed delivery is sent. */
export interface SignedDeliveryTarget {
  /** The receiver's URL, e.g. `http://127.0.0.1:3000/webhooks/checkout`. */
  url: string;
  /** Secret(s): one signature per secret, as during a rotation. */
  secret: string | readonly string[];
  /** How to sign, as the receiver verifies. @default { kind: 'standard-webhooks' } */
  scheme?: WebhookScheme;
  /** Per-request timeout. @default 10000 */
  timeoutMs?: number;
}

/** One delivery: the `webhook-id` and the exact body. */
export interface SignedDeliveryInput {
  id: string;
  body: string;
  /** Unix seconds of the signature. @default now */
  timestamp?: number;
}

/** What the receiver answered. `status` is undefined when no answer came (network error, timeout). */
export interface DeliveryResult {
  status: number | undefined;
  /** A 2xx answer. */
  ok: boolean;
  error: string | undefined;
  /** The error object of a non-2xx answer (`{ error: { code, message } }`), when it had one. */
  answer?: { code: string; message: string } | undefined;
}

/** `{ error: { code, message } }` from an answer's text, when it is one. */
function errorObjectOf(text: string): { code: string; message: string } | undefined {
  try {
    const error = (JSON.parse(text) as { error?: { code?: unknown; message?: unknown } }).error;
    return typeof error?.code === 'string' ? { code: error.code, message: typeof error.message === 'string' ? error.message : '' } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * POST `body` to the target, freshly signed (its scheme, a timestamp of now), as the service
 * would. Never throws for the receiver's answer or a network failure: they are in the result.
 */
export async function deliverSigned(target: SignedDeliveryTarget, delivery: SignedDeliveryInput): Promise<DeliveryResult> {
  const timeoutMs = target.timeoutMs ?? 10_000;
  const headers = {
    'content-type': 'application/json',
    'user-agent': 'checkout-kit-devtools',
    ...signWebhook({ id: delivery.id, body: delivery.body, secret: target.secret, scheme: target.scheme, timestamp: delivery.timestamp }),
  };
  try {
    const response = await fetch(target.url, { method: 'POST', headers, body: delivery.body, signal: AbortSignal.timeout(timeoutMs) });
    const text = await response.text().catch(() => '');
    if (response.ok) return { status: response.status, ok: true, error: undefined };
    return { status: response.status, ok: false, error: `answered ${response.status}`, answer: errorObjectOf(text) };
  } catch (error) {
    const timedOut = error instanceof DOMException && error.name === 'TimeoutError';
    return { status: undefined, ok: false, error: timedOut ? `no answer within ${timeoutMs} ms` : describeFetchError(error, target.url) };
  }
}

import { describeFetchError } from '../errors/index.js';
import { answerErrorOf, describeAnswer, type AnswerError } from '../webhooks/receive/receiver-answer.js';
import type { WebhookScheme } from '../webhooks/schemes/scheme.js';
import { signWebhook } from '../webhooks/verify/sign.js';

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
  /** A failure in one line (`describeAnswer`): `answered 401: signature_invalid — …`, `no answer (…)`. */
  error: string | undefined;
  /** What a non-2xx answer said (its error object, else its body's start), or why no answer came. */
  answer?: AnswerError | undefined;
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
    const answer = answerErrorOf(text);
    return { status: response.status, ok: false, error: describeAnswer({ status: response.status, ...answer }), answer };
  } catch (error) {
    const timedOut = error instanceof DOMException && error.name === 'TimeoutError';
    const answer = { message: timedOut ? `timed out after ${timeoutMs} ms` : describeFetchError(error, target.url) };
    return { status: undefined, ok: false, error: describeAnswer({ status: undefined, ...answer }), answer };
  }
}

import { describeFetchError } from '../errors/index.js';
import { answerErrorOf, describeAnswer } from '../webhooks/receive/receiver-answer.js';

/** What the backend's checkout route did with one order. */
export type OrderResult =
  | { kind: 'created'; paymentId: string }
  /** No such route (a 4xx, e.g. 404, 405, or a webhook receiver answering every path): the backend creates payments some other way. */
  | { kind: 'no-route'; status: number; answer: string }
  | { kind: 'failed'; reason: string };

/**
 * Place an order the way a buyer does: `POST` `{ orderId, amount, email }` (and a partner platform's `tenantId`) as JSON to the backend's
 * checkout route, which creates the payment and answers 303 to its `checkoutUrl` (the sandbox's
 * ends with the payment id). A 2xx JSON answer with `checkoutUrl` or `paymentId` works too.
 */
export async function createOrder(url: string, order: { orderId: string; amount: string; email: string; tenantId?: string | undefined }): Promise<OrderResult> {
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify(order),
      signal: AbortSignal.timeout(15_000),
    });
  } catch (error) {
    return { kind: 'failed', reason: `POST ${url} got no answer (${describeFetchError(error, url)})` };
  }
  const text = await response.text().catch(() => '');
  let location = response.status >= 300 && response.status < 400 ? response.headers.get('location') : null;
  if (location === null && response.ok) {
    try {
      const json = JSON.parse(text) as { checkoutUrl?: unknown; paymentId?: unknown };
      if (typeof json.paymentId === 'string') return { kind: 'created', paymentId: json.paymentId };
      if (typeof json.checkoutUrl === 'string') location = json.checkoutUrl;
    } catch {
      // Not JSON: no payment to find.
    }
  }
  const paymentId = location ? new URL(location, url).pathname.split('/').filter(Boolean).pop() : undefined;
  if (paymentId) return { kind: 'created', paymentId: decodeURIComponent(paymentId) };
  if (response.status >= 400 && response.status < 500) return { kind: 'no-route', status: response.status, answer: errorCode(text) };
  return { kind: 'failed', reason: `POST ${url} gave no checkoutUrl: ${describeAnswer({ status: response.status, ...answerErrorOf(text) })}` };
}

/** The `code` of an error object answer, for the report. */
function errorCode(text: string): string {
  try {
    const code = (JSON.parse(text) as { error?: { code?: unknown } }).error?.code;
    return typeof code === 'string' ? ` ${code}` : '';
  } catch {
    return '';
  }
}

/** Resolves once anything answers HTTP at `url` (any status), or rejects after `timeoutMs`. */
export async function waitReachable(url: string, timeoutMs: number, gaveUp?: () => string | undefined): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  let last: string;
  for (;;) {
    try {
      const response = await fetch(url, { method: 'GET', signal: AbortSignal.timeout(2000) });
      await response.arrayBuffer().catch(() => undefined);
      return;
    } catch (error) {
      last = describeFetchError(error, url);
    }
    const reason = gaveUp?.();
    if (reason !== undefined) throw new Error(reason);
    if (performance.now() > deadline) throw new Error(`nothing answers at ${url} (${last})`);
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
}

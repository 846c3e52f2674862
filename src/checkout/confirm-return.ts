import { CheckoutError } from '../errors/index.js';
import type { FulfillmentEngine } from '../fulfillment/index.js';
import { silentLogger, type Logger } from '../log/index.js';
import type { Outcome, ResourceRecord, Store } from '../store/index.js';

/** What the shop's success page shows: `paid`, still `pending`, or `failed` (expired / underpaid). */
export type OrderState = 'paid' | 'pending' | 'failed';

/** An order's state as the return page shows it, read afresh from the service. */
export interface OrderStatus {
  orderId: string;
  state: OrderState;
  outcome: Outcome;
  kind: 'payment' | 'invoice';
  resourceId: string;
  /** Where to send the buyer to finish paying while pending. */
  checkoutUrl: string | undefined;
  amount: string | undefined;
  amountReceived: string | undefined;
  /**
   * True when the service was asked just now. False when it could not be (an outage): the answer
   * is then the state last stored, which outcomes only ever move forward from, and `note` says so.
   */
  confirmed: boolean;
  /** Why the answer is not freshly confirmed, in words the buyer can read. */
  note?: string | undefined;
}

const STATE: Record<Outcome, OrderState> = { pending: 'pending', paid: 'paid', overpaid: 'paid', underpaid: 'failed', expired: 'failed' };

const NOT_CONFIRMED: Record<OrderState, string> = {
  pending:
    'We could not reach the payment service just now, so your payment is still confirming. This page checks again shortly; there is no need to pay again.',
  paid: 'We could not reach the payment service just now; this is the state it last confirmed.',
  failed: 'We could not reach the payment service just now; this is the state it last confirmed.',
};

const text = (value: unknown) => (typeof value === 'string' ? value : undefined);

/**
 * The buyer came back to the shop: confirm the order's payment with the service through the
 * fulfillment engine (source `return`) and say whether it is paid. Safe to call any number of
 * times; handlers still run once. When the service cannot be asked (an outage), the answer is the
 * stored state with `confirmed: false`, and the failed read is logged: the buyer must not see an
 * error page for a payment that may well have arrived.
 */
export async function confirmReturn(
  deps: { store: Store; engine: FulfillmentEngine; logger?: Logger | undefined; signal?: AbortSignal | undefined; timeoutMs?: number | undefined },
  orderId: string,
): Promise<OrderStatus> {
  if (typeof orderId !== 'string' || orderId === '') throw new CheckoutError('orderId is required.', { code: 'invalid_request' });
  const attempt = await deps.store.getCheckoutAttempt(orderId);
  if (attempt?.status === 'sending' && !attempt.resourceId) {
    // Sent, its answer never had: the service may hold a payment for it, which the same order posted again gets.
    throw new CheckoutError(`The checkout of order ${orderId} was not confirmed by the payment service: place the order again to continue with it.`, {
      code: 'not_found',
    });
  }
  if (!attempt?.resourceId) throw new CheckoutError(`No checkout was created for order ${orderId}.`, { code: 'not_found' });
  const known = { orderId, kind: attempt.kind, resourceId: attempt.resourceId, checkoutUrl: attempt.checkoutUrl };
  try {
    // The read runs under the server's signal, which every return shares: concurrent returns of one
    // payment then share one read of the service. Past `timeoutMs` the buyer gets the stored state;
    // the read goes on, and what it learns is stored.
    const result = await answerWithin(
      deps.engine.process({ kind: attempt.kind, id: attempt.resourceId, source: 'return', orderId, signal: deps.signal }),
      deps.timeoutMs,
    );
    const { amount, amountReceived } = result.classification;
    return { ...known, state: STATE[result.outcome], outcome: result.outcome, amount, amountReceived, confirmed: true };
  } catch (error) {
    (deps.logger ?? silentLogger).warn(
      { err: error, orderId, kind: attempt.kind, resourceId: attempt.resourceId },
      'could not confirm a return with the payment service; answered the stored state',
    );
    return storedStatus(known, await deps.store.getResource(attempt.kind, attempt.resourceId));
  }
}

/** `work`, or a `TimeoutError` once `timeoutMs` have passed without it settling. */
function answerWithin<T>(work: Promise<T>, timeoutMs: number | undefined): Promise<T> {
  if (timeoutMs === undefined) return work;
  // Settling after the answer, its failure is the engine's to log, not an unhandled rejection.
  work.catch(() => undefined);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new DOMException(`no answer within ${timeoutMs} ms`, 'TimeoutError')), timeoutMs);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/** The order's state as last stored (pending when nothing was ever learned). */
function storedStatus(known: Pick<OrderStatus, 'orderId' | 'kind' | 'resourceId' | 'checkoutUrl'>, record: ResourceRecord | undefined): OrderStatus {
  const outcome = record?.outcome ?? 'pending';
  const state = STATE[outcome];
  return {
    ...known,
    state,
    outcome,
    amount: text(record?.snapshot?.amount),
    amountReceived: text(record?.snapshot?.amountReceived),
    confirmed: false,
    note: NOT_CONFIRMED[state],
  };
}

import { CheckoutError } from '../errors/index.js';
import type { FulfillmentEngine } from '../fulfillment/index.js';
import type { Outcome, Store } from '../store/index.js';

/** What the shop's success page shows: `paid`, still `pending`, or `failed` (expired / underpaid). */
export type OrderState = 'paid' | 'pending' | 'failed';

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
}

const STATE: Record<Outcome, OrderState> = { pending: 'pending', paid: 'paid', overpaid: 'paid', underpaid: 'failed', expired: 'failed' };

/**
 * The buyer came back to the shop: confirm the order's payment with the service through the
 * fulfillment engine (source `return`) and say whether it is paid. Safe to call any number of
 * times; handlers still run once.
 */
export async function confirmReturn(deps: { store: Store; engine: FulfillmentEngine }, orderId: string): Promise<OrderStatus> {
  if (typeof orderId !== 'string' || orderId === '') throw new CheckoutError('invalid_request', 400, 'orderId is required.');
  const attempt = await deps.store.getCheckoutAttempt(orderId);
  if (!attempt?.resourceId) throw new CheckoutError('not_found', 404, `No checkout was created for order ${orderId}.`);
  const result = await deps.engine.process({ kind: attempt.kind, id: attempt.resourceId, source: 'return', orderId });
  return {
    orderId,
    state: STATE[result.outcome],
    outcome: result.outcome,
    kind: attempt.kind,
    resourceId: attempt.resourceId,
    checkoutUrl: attempt.checkoutUrl,
    amount: result.classification.amount,
    amountReceived: result.classification.amountReceived,
  };
}

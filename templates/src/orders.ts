/**
 * A stand-in for your order database, so the scaffold runs as is. Replace these functions with
 * writes to your own tables; keep the idempotency check (the `key` column) when you do.
 */
export type OrderState = 'awaiting-payment' | 'paid' | 'underpaid' | 'expired';

export interface Order {
  id: string;
  state: OrderState;
  /** The fulfillment key that marked the order paid: a second call with it changes nothing. */
  paidKey?: string;
  /** What to refund or credit when the buyer sent too much. */
  surplus?: string;
  /** What the buyer still owes when they sent too little. */
  shortfall?: string;
  /** Paid after the payment had expired: the stock may already be released. */
  late?: boolean;
  /** How many times the order was shipped (must never exceed 1). */
  shipments: number;
}

const orders = new Map<string, Order>();

export function getOrder(id: string): Order | undefined {
  return orders.get(id);
}

function order(id: string): Order {
  let found = orders.get(id);
  if (!found) {
    found = { id, state: 'awaiting-payment', shipments: 0 };
    orders.set(id, found);
  }
  return found;
}

/** Mark paid and ship, once per key (in SQL: `UPDATE … WHERE paid_key IS NULL`). */
export function markPaid(id: string, details: { key: string; late: boolean; surplus?: string }): Order {
  const current = order(id);
  if (current.paidKey !== undefined) {
    // Already shipped; more money arrived later (paid → overpaid): only the surplus is new.
    if (details.surplus !== undefined) current.surplus = details.surplus;
    return current;
  }
  Object.assign(current, { state: 'paid', paidKey: details.key, late: details.late, surplus: details.surplus, shortfall: undefined });
  current.shipments += 1;
  return current;
}

export function markUnderpaid(id: string, shortfall: string): Order {
  const current = order(id);
  if (current.state === 'awaiting-payment') Object.assign(current, { state: 'underpaid', shortfall });
  return current;
}

export function markExpired(id: string): Order {
  const current = order(id);
  if (current.state === 'awaiting-payment') current.state = 'expired';
  return current;
}

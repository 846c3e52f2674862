/**
 * Payloads of the `serve` benchmarks (serve, serve-postgres, flush, slow-handler): payments whose
 * ids are UUIDs, as the client and the event schema require, in the three states a payment goes
 * through (created, partially paid, paid), and the ~1.2 KB `payment.*` events that carry them.
 *
 * Shared by the load side (the bench process) and the stand-in service (a child process), so it
 * imports nothing heavy.
 */
import { randomBytes } from 'node:crypto';
import { createRng, shuffle } from '../../src/sandbox/webhooks/faults.js';

/** The deposit addresses of every benchmark payment: three networks, as a real payment lists them. */
export const DEPOSIT_ADDRESSES = [
  {
    networkId: 1,
    chainName: 'Ethereum',
    family: 'evm',
    address: '0x71C7656EC7ab88b098defB751B7401B5f6d8976F',
    token: 'USDC',
    chainId: '0d6a3c10-1f2e-4a5b-9c8d-7e6f5a4b3c2d',
  },
  {
    networkId: 137,
    chainName: 'Polygon',
    family: 'evm',
    address: '0x8Ba1f109551bD432803012645Ac136ddd64DBA72',
    token: 'USDC',
    chainId: '2b7e4d90-3c1a-4f6e-8d5b-9a0c1e2f3a4b',
  },
  {
    networkId: 728126428,
    chainName: 'Tron',
    family: 'tron',
    address: 'TXLAQ63Xg1NAzckPwKHvzw7CSEmLMEqcdj',
    token: 'USDT',
    chainId: '5e9f1a2b-6c3d-4e7f-8a9b-0c1d2e3f4a5b',
  },
];

export type PaymentState = 'created' | 'partially_paid' | 'paid';

const STATUS: Record<PaymentState, string> = { created: 'CREATED', partially_paid: 'PARTIALLY_PAID', paid: 'PAID' };
const AMOUNT = '149.90';
const RECEIVED: Record<PaymentState, string> = { created: '0', partially_paid: '50.00', paid: AMOUNT };
const REMAINING: Record<PaymentState, string> = { created: AMOUNT, partially_paid: '99.90', paid: '0' };

/** A UUID (version-4 layout) made of an 8-hex-digit run tag and a sequence number: unique per run, cheap. */
export function uuidFor(tag: string, n: number): string {
  return `${tag}-${(n % 0x10000).toString(16).padStart(4, '0')}-4000-8000-${n.toString(16).padStart(12, '0')}`;
}

/** 8 hex digits, new per call: the tag that keeps one run's ids apart from another's. */
export function newRunTag(): string {
  return randomBytes(4).toString('hex');
}

/**
 * A payment as the service would answer Get payment, and as `payment.*` events carry it. Times:
 * created an hour ago (relative to `now`), expiring in an hour, so a full amount classifies `paid`
 * (not late) and a partial one stays pending.
 */
export function payment(id: string, state: PaymentState, now = Date.now()): Record<string, unknown> {
  const createdAt = new Date(now - 3_600_000).toISOString();
  return {
    id,
    status: STATUS[state],
    environment: 'test',
    addressMode: 'EVM',
    amount: AMOUNT,
    amountReceived: RECEIVED[state],
    remaining: REMAINING[state],
    surplus: '0',
    token: 'USDC',
    referenceId: `order-${id.slice(-12)}`,
    email: 'buyer@example.com',
    checkoutUrl: `https://pay.example.com/checkout/${id}`,
    expiresAt: new Date(now + 3_600_000).toISOString(),
    successUrl: `https://shop.example.com/checkout/return?orderId=order-${id.slice(-12)}`,
    cancelUrl: 'https://shop.example.com/cart',
    depositAddresses: DEPOSIT_ADDRESSES,
    createdAt,
    updatedAt: new Date(now - (state === 'created' ? 3_600_000 : state === 'partially_paid' ? 1_800_000 : 600_000)).toISOString(),
  };
}

/** Event type of each state. */
export const EVENT_TYPE: Record<PaymentState, string> = { created: 'payment.created', partially_paid: 'payment.partially_paid', paid: 'payment.paid' };

/** One delivery: the event body (sent byte-exact) and the delivery id it is signed with (`webhook-id`). */
export interface Delivery {
  msgId: string;
  eventId: string;
  paymentId: string;
  body: string;
}

/** A `payment.*` event (contract 3c) for `paymentId` in `state`; about 1.2 KB. */
export function paymentEvent(eventId: string, paymentId: string, state: PaymentState, now = Date.now()): Delivery {
  const data = payment(paymentId, state, now);
  const body = JSON.stringify({ id: eventId, type: EVENT_TYPE[state], createdAt: data.updatedAt, environment: 'test', data });
  return { msgId: `msg_${eventId.slice(4)}`, eventId, paymentId, body };
}

/** Distinct `payment.paid` events for distinct payments, cheaply (a template with a new UUID spliced in per call). */
export function distinctPaidEvents(): () => { msgId: string; body: string } {
  const MARK = 'ffffffff-ffff-4fff-8fff-ffffffffffff';
  const parts = paymentEvent(`evt_${MARK}`, MARK, 'paid').body.split(MARK);
  const tag = newRunTag();
  let n = 0;
  return () => {
    const seq = (n++).toString(16).padStart(12, '0');
    const id = `${tag}-${seq.slice(0, 4)}-4${seq.slice(4, 7)}-8${seq.slice(7, 10)}-${seq}`;
    return { msgId: `msg_${id}`, body: parts.join(id) };
  };
}

/**
 * A provider flushing a backlog: for each of `payments` payments its `payment.created`,
 * `payment.partially_paid` and `payment.paid` events, in that order for the payment but
 * interleaved at random across payments, plus `duplicates` re-deliveries of earlier events
 * (same event, same `webhook-id`) spread in at random later positions.
 */
export function backlog({ payments, duplicates, tag = newRunTag(), seed = 13 }: { payments: number; duplicates: number; tag?: string; seed?: number }): {
  deliveries: Delivery[];
  paymentIds: string[];
} {
  // Seeded: the backlog's interleaving and its duplicates are the same in every run of a given size.
  const random = createRng(seed);
  const paymentIds = Array.from({ length: payments }, (_, i) => uuidFor(tag, i));
  const states: PaymentState[] = ['created', 'partially_paid', 'paid'];
  // Each payment appears three times; a shuffle of those slots, each slot taking its payment's
  // next state, interleaves payments while keeping each one's events in order.
  const slots = shuffle(
    Array.from({ length: payments * states.length }, (_, i) => i % payments),
    random,
  );
  const next = new Array<number>(payments).fill(0);
  const now = Date.now();
  const deliveries: Delivery[] = slots.map((p) => {
    const state = states[next[p]!++]!;
    return paymentEvent(`evt_${uuidFor(tag, p)}_${state}`, paymentIds[p]!, state, now);
  });
  // Duplicates: a re-delivery lands after its original, somewhere later in the flush.
  for (let d = 0; d < duplicates && deliveries.length > 0; d++) {
    const original = Math.floor(random() * deliveries.length);
    const at = original + 1 + Math.floor(random() * (deliveries.length - original));
    deliveries.splice(at, 0, deliveries[original]!);
  }
  return { deliveries, paymentIds };
}

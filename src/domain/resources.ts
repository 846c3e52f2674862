/**
 * The toolkit's vocabulary, below every capability: what it follows (payments and invoices), the
 * outcomes they reach and how news of them arrives. The store, the runs and the engine all speak it.
 */

/** A resource the toolkit follows: a payment or an invoice. */
export type ResourceKind = 'payment' | 'invoice';

/**
 * The outcome of a resource. `pending` has no handler. Outcomes only move
 * forward by `OUTCOME_RANK`.
 */
export type Outcome = 'pending' | 'underpaid' | 'expired' | 'paid' | 'overpaid';

/** Rank of each outcome: a resource's stored outcome never moves to a lower rank. */
export const OUTCOME_RANK: Record<Outcome, number> = { pending: 0, underpaid: 1, expired: 1, paid: 2, overpaid: 2 };

/** How news of a resource arrived. */
export type NewsSource = 'webhook' | 'reconcile' | 'return' | 'checkout';

/** Handler outcomes: every outcome but `pending` (which has no handler). */
export type HandlerOutcome = Exclude<Outcome, 'pending'>;

// A `Record` over the union, so that an outcome added to `Outcome` is a compile error here until
// it is placed; the order is the one users read in messages (`paid`, `overpaid`, …).
const HANDLER_OUTCOME_SET: Record<HandlerOutcome, true> = { paid: true, overpaid: true, underpaid: true, expired: true };

/** Every handler outcome, derived from `HandlerOutcome`. */
export const HANDLER_OUTCOMES = Object.keys(HANDLER_OUTCOME_SET) as readonly HandlerOutcome[];

const RESOURCE_KIND_SET: Record<ResourceKind, true> = { payment: true, invoice: true };

/** Every resource kind, derived from `ResourceKind`. */
export const RESOURCE_KINDS = Object.keys(RESOURCE_KIND_SET) as readonly ResourceKind[];

export const isHandlerOutcome = (value: string): value is HandlerOutcome => Object.hasOwn(HANDLER_OUTCOME_SET, value);
export const isResourceKind = (value: string): value is ResourceKind => Object.hasOwn(RESOURCE_KIND_SET, value);

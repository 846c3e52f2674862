import type { Outcome, ResourceKind, Run } from '../store/types.js';

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

/** Every run status, derived from `Run['status']` (a status added there is a compile error here). */
export const RUN_STATUSES = Object.keys({ pending: true, running: true, done: true, failed: true } satisfies Record<Run['status'], true>) as readonly Run['status'][];

export const isHandlerOutcome = (value: string): value is HandlerOutcome => Object.hasOwn(HANDLER_OUTCOME_SET, value);
const isResourceKind = (value: string): value is ResourceKind => Object.hasOwn(RESOURCE_KIND_SET, value);

/**
 * The prefix of every event dispatch run's key. Stored data depends on it (journals, snapshots,
 * the PostgreSQL `events` table's computed key): never change it.
 */
export const EVENT_RUN_PREFIX = 'event:';

/** The key of the run that dispatches event `<id>`. */
export type EventRunKey = `event:${string}`;
/** The key of the run that calls the handler of one resource and outcome. */
export type FulfillmentRunKey = `${ResourceKind}:${string}:${HandlerOutcome}`;
export type RunKey = EventRunKey | FulfillmentRunKey;

/**
 * The keys of the toolkit's runs, in the string format stored data already holds.
 * @example runKeys.event('evt_1') // 'event:evt_1'
 * @example runKeys.fulfillment('payment', 'pay_1', 'paid') // 'payment:pay_1:paid'
 */
export const runKeys = {
  /** The dispatch run `store.insertEvent` queues with each new event. */
  event: (eventId: string): EventRunKey => `${EVENT_RUN_PREFIX}${eventId}` as EventRunKey,
  /** The stable idempotency key of one resource and outcome, given to handlers as `ctx.key`. */
  fulfillment: (kind: ResourceKind, id: string, outcome: HandlerOutcome): FulfillmentRunKey => `${kind}:${id}:${outcome}`,
};

/** What a run key names. */
export type ParsedRunKey =
  | { kind: 'event'; eventId: string }
  | { kind: 'fulfillment'; resourceKind: ResourceKind; resourceId: string; outcome: HandlerOutcome };

/**
 * Read a run key back: an event's dispatch run, or a resource's handler run. Undefined for a key
 * the toolkit does not make (stores accept any key for runs of their own).
 */
export function parseRunKey(key: string): ParsedRunKey | undefined {
  if (key.startsWith(EVENT_RUN_PREFIX)) return { kind: 'event', eventId: key.slice(EVENT_RUN_PREFIX.length) };
  // Resource ids may hold `:`; the kind and the outcome may not.
  const first = key.indexOf(':');
  const last = key.lastIndexOf(':');
  if (first <= 0 || last <= first + 1) return undefined;
  const resourceKind = key.slice(0, first);
  const outcome = key.slice(last + 1);
  if (!isResourceKind(resourceKind) || !isHandlerOutcome(outcome)) return undefined;
  return { kind: 'fulfillment', resourceKind, resourceId: key.slice(first + 1, last), outcome };
}

/** The event id of a dispatch run's key; undefined for any other key. */
export function eventIdOf(key: string): string | undefined {
  // parseRunKey's first case, without parsing the fulfillment keys it is asked about on every claim.
  return key.startsWith(EVENT_RUN_PREFIX) ? key.slice(EVENT_RUN_PREFIX.length) : undefined;
}

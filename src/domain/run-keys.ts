import { isHandlerOutcome, isResourceKind, type HandlerOutcome, type ResourceKind } from './resources.js';

/** Where a run is: `pending` (due at its next attempt), `running` (leased), `done`, `failed` (given up). */
export type RunStatus = 'pending' | 'running' | 'done' | 'failed';

/** Every run status, derived from `RunStatus` (a status added there is a compile error here). */
export const RUN_STATUSES = Object.keys({ pending: true, running: true, done: true, failed: true } satisfies Record<RunStatus, true>) as readonly RunStatus[];

/**
 * The prefix of every event dispatch run's key. Stored data depends on it (the run queue's keys):
 * never change it.
 */
export const EVENT_RUN_PREFIX = 'event:';

/** The key of the run that dispatches event `<id>`. */
export type EventRunKey = `event:${string}`;
/** The key of the run that calls the handler of one resource and outcome. */
export type FulfillmentRunKey = `${ResourceKind}:${string}:${HandlerOutcome}`;
/** The key of any run: an event's dispatch or a handler run. */
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

/**
 * `runKeys.fulfillment` in SQL, over the columns (or expressions) holding the kind, id and outcome:
 * the key of the handler run of a resource's current outcome, for joining resources to their runs.
 */
export const fulfillmentKeySql = (kind: string, id: string, outcome: string) => `${kind} || ':' || ${id} || ':' || ${outcome}`;

/** What a run key names. */
export type ParsedRunKey =
  { kind: 'event'; eventId: string } | { kind: 'fulfillment'; resourceKind: ResourceKind; resourceId: string; outcome: HandlerOutcome };

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

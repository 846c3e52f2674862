import type { Logger } from '../log/index.js';
import type { CheckoutEvent } from '../schemas/event.js';
import type { Store } from '../store/types.js';
import { backoffDelay } from './backoff-delay.js';
import type { HandlerRegistry } from './event-handlers.js';
import { WebhookHandlerError } from './handler-error.js';
import { runHandlers } from './run-handlers.js';
import { keepLease } from '../store/keep-lease.js';

/** Key of the dispatch run `store.insertEvent` queues with each new event. */
export const eventRunKey = (eventId: string) => `event:${eventId}`;
const RUN_PREFIX = 'event:';

export interface DispatcherSettings {
  store: Store;
  handlers: HandlerRegistry;
  logger: Logger;
  owner: string;
  leaseMs: number;
  maxAttempts: number;
  backoffMs: number;
  maxBackoffMs: number;
  /** The receiver's clock: claims, renewals, retries and due times all read it. */
  clock: () => Date;
  /** Rebuild a stored event for dispatch; a string says why it cannot be. */
  loadEvent(eventId: string): Promise<CheckoutEvent | string>;
}

/** What one dispatch attempt did. `skipped`: someone else holds the run, or it is finished. */
export type DispatchOutcome = 'done' | 'retry' | 'failed' | 'skipped' | 'error';

export interface Dispatcher {
  /** Claim the event's run and run its handlers once. `event` saves a reload right after receipt. */
  dispatch(eventId: string, event?: CheckoutEvent): Promise<DispatchOutcome>;
  /** Dispatch every due run (pending and due, or leased by a worker whose lease ran out) at `now`. */
  dispatchDue(now?: Date): Promise<number>;
  /** Put failed runs (one, or all) back to pending; returns how many. */
  retryFailed(eventId?: string): Promise<number>;
  /** Remember a promise so that `idle()` waits for it. */
  track<T>(promise: Promise<T>): Promise<T>;
  /** Resolves once no dispatch is in flight. */
  idle(): Promise<void>;
}

const PAGE = 100;

export function createDispatcher(settings: DispatcherSettings): Dispatcher {
  const { store, handlers, logger, owner, leaseMs, maxAttempts, clock } = settings;
  const inFlight = new Set<Promise<unknown>>();

  function track<T>(promise: Promise<T>): Promise<T> {
    inFlight.add(promise);
    const forget = () => inFlight.delete(promise);
    promise.then(forget, forget);
    return promise;
  }

  async function notify(error: WebhookHandlerError): Promise<void> {
    const listeners = handlers.errorHandlers();
    if (listeners.length === 0) {
      logger.error({ eventId: error.event.id, type: error.event.type, attempt: error.attempt, errors: error.errors.map(String) }, error.message);
      return;
    }
    const failures = await runHandlers(
      listeners.map((listener) => () => listener(error)),
      error.event,
    );
    for (const failure of failures) logger.error({ eventId: error.event.id, err: String(failure) }, 'An onError handler threw');
  }

  async function attempt(eventId: string, known: CheckoutEvent | undefined): Promise<DispatchOutcome> {
    const key = eventRunKey(eventId);
    const run = await store.claimRun(key, { owner, leaseMs, now: clock() });
    if (!run) return 'skipped';
    const event = known ?? (await settings.loadEvent(eventId));
    if (typeof event === 'string') {
      await store.failRun(key, owner, { error: event, now: clock() });
      logger.error({ eventId }, `Cannot dispatch event ${eventId}: ${event}`);
      return 'failed';
    }
    const stopRenewing = keepLease({
      store,
      key,
      owner,
      leaseMs,
      clock,
      onLost: (reason) => logger.warn({ eventId, reason }, `Lost the lease on event ${eventId} while its handlers ran; another worker may run them again.`),
    });
    const errors = await runHandlers(handlers.handlersFor(event.type), event).finally(stopRenewing);
    if (errors.length === 0) {
      if (!(await store.completeRun(key, owner, clock()))) {
        logger.warn({ eventId, leaseMs }, `Lease on event ${eventId} ran out before its handlers finished; another worker may run them again. Raise leaseMs.`);
      }
      return 'done';
    }
    const willRetry = run.attempts < maxAttempts;
    const now = clock();
    const retryAt = willRetry ? new Date(now.getTime() + backoffDelay(run.attempts, settings.backoffMs, settings.maxBackoffMs)).toISOString() : undefined;
    const error = new WebhookHandlerError(event, errors, run.attempts, maxAttempts, retryAt);
    await store.failRun(key, owner, { error: error.message, retryAt, now });
    await notify(error);
    return willRetry ? 'retry' : 'failed';
  }

  function dispatch(eventId: string, event?: CheckoutEvent): Promise<DispatchOutcome> {
    return track(
      attempt(eventId, event).catch((error: unknown) => {
        // A store failure: the run stays claimable (pending, or its lease runs out) for a later pass.
        logger.error({ eventId, err: String(error) }, `Dispatch of event ${eventId} failed: ${String(error)}`);
        return 'error' as const;
      }),
    );
  }

  async function dispatchDue(now = clock()): Promise<number> {
    let dispatched = 0;
    for (;;) {
      const due = await store.listRuns({ kind: 'event', status: ['pending', 'running'], dueBy: now.toISOString(), limit: PAGE });
      const outcomes = await Promise.all(due.map((run) => dispatch(run.key.slice(RUN_PREFIX.length))));
      const claimed = outcomes.filter((outcome) => outcome !== 'skipped' && outcome !== 'error').length;
      dispatched += claimed;
      if (due.length < PAGE || claimed === 0) return dispatched;
    }
  }

  async function retryFailed(eventId?: string): Promise<number> {
    if (eventId !== undefined) return (await store.retryRun(eventRunKey(eventId), clock())) ? 1 : 0;
    let count = 0;
    for (;;) {
      const failed = await store.listRuns({ kind: 'event', status: 'failed', limit: PAGE });
      let retried = 0;
      for (const run of failed) if (await store.retryRun(run.key, clock())) retried += 1;
      count += retried;
      if (failed.length < PAGE || retried === 0) return count;
    }
  }

  async function idle(): Promise<void> {
    while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
  }

  return { dispatch, dispatchDue, retryFailed, track, idle };
}

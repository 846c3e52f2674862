import { setMaxListeners } from 'node:events';
import { isAbortedBy } from '../errors/index.js';
import type { CheckoutEvent } from '../schemas/event.js';
import { COMPLETION_RETRIES, eventIdOf, executeRun, retryFailed, runKeys, type RunSettings } from '../runs/index.js';
import type { Store } from '../store/types.js';
import type { HandlerRegistry } from './event-handlers.js';
import { WebhookHandlerError } from './handler-error.js';
import { runHandlers, type DeliveryInfo } from './run-handlers.js';

/** The receiver's run settings (its clock: claims, renewals, retries and due times all read it); completions are retried as `COMPLETION_RETRIES` says. */
export interface DispatcherSettings extends Omit<RunSettings, keyof typeof COMPLETION_RETRIES> {
  store: Store;
  handlers: HandlerRegistry;
  /** Dispatches in flight at once, started from the durable queue oldest first. */
  concurrency: number;
  /** Rebuild a stored event for dispatch; a string says why it cannot be. */
  loadEvent(eventId: string): Promise<CheckoutEvent | string>;
}

/**
 * What one dispatch attempt did. `skipped`: someone else holds the run, or it is finished.
 * `stopped`: the dispatcher stopped while its handlers waited, and they gave up; the run's lease is
 * given back (not a failed attempt) for the next start.
 */
export type DispatchOutcome = 'done' | 'retry' | 'failed' | 'skipped' | 'error' | 'stopped';

export interface Dispatcher {
  /** Claim the event's run and run its handlers once. `event` saves a reload right after receipt. */
  dispatch(eventId: string, event?: CheckoutEvent): Promise<DispatchOutcome>;
  /**
   * An event was just stored: make sure the queue is being worked on. Never waits: the event
   * is dispatched from the store when its turn comes (oldest first, `concurrency` at a time).
   */
  notify(event: CheckoutEvent): void;
  /** Start what is due now (up to the concurrency) without waiting for it; resolves with how many started. */
  kick(): Promise<number>;
  /** Stop starting new dispatches (those in flight go on); `resume()` starts again. */
  pause(): void;
  /**
   * Pause, and abort the signal of the dispatches in flight (`DeliveryInfo.signal`): a handler
   * waiting on something slow, such as a confirm read held back by the service's `Retry-After`,
   * gives up instead of holding the shutdown. `resume()` starts again with a fresh signal.
   */
  stop(): void;
  resume(): void;
  /**
   * Dispatch every due run (pending and due, or leased by a worker whose lease ran out), at most
   * `concurrency` at a time; resolves with how many were dispatched once none is left.
   */
  dispatchDue(): Promise<number>;
  /** Put failed runs (one, or all) back to pending; returns how many. */
  retryFailed(eventId?: string): Promise<number>;
  /** Remember a promise so that `idle()` waits for it. */
  track<T>(promise: Promise<T>): Promise<T>;
  /** Resolves once no dispatch is in flight. */
  idle(): Promise<void>;
}

/** The handlers' failures of one attempt, made a `WebhookHandlerError` once the runner has decided the retry. */
class HandlerFailures {
  constructor(
    readonly event: CheckoutEvent,
    readonly errors: unknown[],
  ) {}
}

/** Thrown through the runner when handlers failed because the dispatcher stopped: not the attempt's failure. */
class DispatchStopped extends Error {}

/**
 * The controller whose signal every dispatch in flight is given. Each dispatch's read listens to
 * it in a few places at once (the coalescer, the rate limiter, the request, a retry's wait): room
 * for that, and still a warning if listeners were ever left behind.
 */
function stopController(concurrency: number): AbortController {
  const controller = new AbortController();
  setMaxListeners(Math.max(10, 4 * concurrency + 8), controller.signal);
  return controller;
}

/** Events kept parsed in memory between their receipt and their dispatch, per unit of concurrency. */
const KEPT_PER_SLOT = 4;

export function createDispatcher(settings: DispatcherSettings): Dispatcher {
  const { store, handlers, logger, leaseMs, maxAttempts, clock } = settings;
  const inFlight = new Set<Promise<unknown>>();
  /** Aborted by `stop()`: the signal of every dispatch in flight then. */
  let stopping = stopController(settings.concurrency);

  function track<T>(promise: Promise<T>): Promise<T> {
    inFlight.add(promise);
    const forget = () => inFlight.delete(promise);
    promise.then(forget, forget);
    return promise;
  }

  async function reportFailure(error: WebhookHandlerError): Promise<void> {
    const listeners = handlers.errorHandlers();
    if (listeners.length === 0) {
      // An attempt that will be retried is a warning; giving up is the error a person must act on.
      const log = error.willRetry ? logger.warn : logger.error;
      log.call(logger, { eventId: error.event.id, type: error.event.type, attempt: error.attempt, errors: error.errors.map(String) }, error.message);
      return;
    }
    const failures = await runHandlers(listeners.map((listener) => () => listener(error)));
    for (const failure of failures) logger.error({ eventId: error.event.id, err: failure }, 'An onError handler threw');
  }

  const { owner, backoffMs, maxBackoffMs } = settings;
  const runSettings: RunSettings = { owner, leaseMs, maxAttempts, backoffMs, maxBackoffMs, ...COMPLETION_RETRIES, clock, logger };

  async function attempt(eventId: string, known: CheckoutEvent | undefined): Promise<DispatchOutcome> {
    const result = await executeRun(
      store,
      runKeys.event(eventId),
      {
        ...runSettings,
        onLeaseLost: (reason) => logger.warn({ eventId, reason }, `Lost the lease on event ${eventId} while its handlers ran; another worker may run them again.`),
        explain: (error, { attempt: number, retryAt }) =>
          error instanceof HandlerFailures ? new WebhookHandlerError(error.event, error.errors, number, maxAttempts, retryAt) : error,
      },
      async (run) => {
        const { signal } = stopping;
        const event = known ?? (await settings.loadEvent(eventId));
        // An event that cannot be rebuilt never will be: given up at once.
        if (typeof event === 'string') return { ok: false, error: event, giveUp: true };
        const delivery: DeliveryInfo = { storedAt: run.createdAt, signal };
        const errors = await runHandlers(handlers.handlersFor(event.type).map((handler) => () => handler(event, delivery)));
        // Failing because we are stopping (a read given up) is no attempt's failure: thrown past
        // the runner, which then stores nothing (see `dispatch`).
        if (errors.length > 0 && errors.every((error) => isAbortedBy(error, signal))) throw new DispatchStopped(String(signal.reason));
        return errors.length === 0 ? { ok: true, value: undefined } : { ok: false, error: new HandlerFailures(event, errors) };
      },
    );
    switch (result.status) {
      case 'not-claimed':
        return 'skipped';
      case 'finished':
        if (result.completion === 'lease-lost') {
          logger.warn({ eventId, leaseMs }, `Lease on event ${eventId} ran out before its handlers finished; another worker may run them again. Raise leaseMs.`);
        }
        // Not stored: the run stays claimable once its lease runs out, as after a store failure.
        return result.completion === 'unstored' ? 'error' : 'done';
      case 'retrying':
      case 'failed':
        if (result.error instanceof WebhookHandlerError) await reportFailure(result.error);
        else logger.error({ eventId }, `Cannot dispatch event ${eventId}: ${String(result.error)}`);
        return result.status === 'retrying' ? 'retry' : 'failed';
    }
  }

  function dispatch(eventId: string, event?: CheckoutEvent): Promise<DispatchOutcome> {
    return track(
      attempt(eventId, event).catch(async (error: unknown) => {
        if (error instanceof DispatchStopped) {
          // Give the lease back (it ends now): the next start, or another process, dispatches the
          // event at once instead of after `leaseMs`. The claim counted as an attempt, as a crash's does.
          const givenBack = await store.renewLease(runKeys.event(eventId), settings.owner, 0, clock()).catch(() => false);
          logger.info({ eventId }, `Stopped while dispatching event ${eventId}: it is dispatched again at the next start${givenBack ? '' : ` (once its lease runs out, within ${leaseMs} ms)`}.`);
          return 'stopped' as const;
        }
        // A store failure: the run stays claimable (pending, or its lease runs out) for a later pass.
        logger.error({ eventId, err: error }, `Dispatch of event ${eventId} failed: ${String(error)}`);
        return 'error' as const;
      }),
    );
  }

  // The queue pump: the store is the queue; this process keeps only what is in flight (at most
  // `concurrency` ids), a page of due ids read ahead, and a few just-received events, so memory
  // does not grow with a backlog.
  const active = new Map<string, Promise<DispatchOutcome>>();
  const kept = new Map<string, CheckoutEvent>();
  /** Due event ids read ahead from the store, oldest first: one queue read per page, not per dispatch. */
  let ahead: string[] = [];
  let paused = false;
  /** Dispatches this process finished (claimed and ran), for `dispatchDue`'s answer. */
  let dispatchedCount = 0;
  let filling: Promise<void> | undefined;
  let refill = false;
  const pageSize = settings.concurrency * KEPT_PER_SLOT;

  /**
   * Start due runs, oldest first, up to the free slots. `skip` holds ids not to start again (one
   * `dispatchDue` call tries each run once); `dueBy` bounds what counts as due.
   */
  async function fill(skip?: Set<string>, dueBy?: string): Promise<Array<Promise<DispatchOutcome>>> {
    const started: Array<Promise<DispatchOutcome>> = [];
    for (let read = false; ; read = true) {
      while (!paused && active.size < settings.concurrency && ahead.length > 0) {
        const eventId = ahead.shift() as string;
        if (active.has(eventId) || skip?.has(eventId)) continue;
        skip?.add(eventId);
        started.push(start(eventId));
      }
      if (paused || active.size >= settings.concurrency || read) return started;
      const due = await store.listRuns({ kind: 'event', status: ['pending', 'running'], dueBy: dueBy ?? clock().toISOString(), limit: pageSize + active.size });
      // stop() may have come while the queue was being read.
      if (paused) return started;
      ahead = due.flatMap((run) => eventIdOf(run.key) ?? []).filter((eventId) => !active.has(eventId));
      // The whole due queue fits in the page: a kept event not in it was dispatched elsewhere.
      if (due.length < pageSize + active.size) for (const eventId of kept.keys()) if (!active.has(eventId) && !ahead.includes(eventId)) kept.delete(eventId);
    }
  }

  function start(eventId: string): Promise<DispatchOutcome> {
    const known = kept.get(eventId);
    kept.delete(eventId);
    const promise = dispatch(eventId, known);
    active.set(eventId, promise);
    void promise.then((outcome) => {
      active.delete(eventId);
      if (outcome === 'done' || outcome === 'retry' || outcome === 'failed') dispatchedCount += 1;
      // A store failure leaves the run due: the poll timer tries it again, not a hot loop here.
      if (outcome !== 'error' && outcome !== 'stopped') wake();
    });
    return promise;
  }

  /** Fill free slots now, once per burst of wake-ups. */
  function wake(): void {
    if (paused) return;
    if (filling) {
      refill = true;
      return;
    }
    filling = track(
      (async () => {
        do {
          refill = false;
          await fill();
        } while (refill && active.size < settings.concurrency);
      })()
        .catch((error: unknown) => logger.error({ err: error }, `Could not read the dispatch queue: ${String(error)}`))
        .finally(() => (filling = undefined)),
    );
  }

  let wakeScheduled = false;
  function notify(event: CheckoutEvent): void {
    // A bounded cache of the oldest undispatched events (the next to go); later ones are read back.
    if (kept.size < pageSize) kept.set(event.id, event);
    // After the ack: the adapter writes the response before any dispatch work starts.
    if (wakeScheduled) return;
    wakeScheduled = true;
    void track(
      new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
        wakeScheduled = false;
        wake();
      }),
    );
  }

  /** Start what is due now and return at once with how many were started; completions keep the pump going. */
  async function kick(): Promise<number> {
    if (paused) return 0;
    return (await fill()).length;
  }

  async function dispatchDue(): Promise<number> {
    const before = dispatchedCount;
    const tried = new Set<string>();
    // What is due when called: a stream of new events arriving meanwhile does not keep it going.
    const dueBy = clock().toISOString();
    for (;;) {
      const started = await fill(tried, dueBy);
      if (started.length === 0 && active.size === 0) break;
      // Wait for a slot; what the background pump starts meanwhile counts too.
      await Promise.race(started.length > 0 ? started : active.values());
      if (paused) {
        await Promise.all(active.values());
        break;
      }
    }
    return dispatchedCount - before;
  }

  function retryFailedEvents(eventId?: string): Promise<number> {
    return retryFailed(store, { kind: 'event', key: eventId === undefined ? undefined : runKeys.event(eventId), clock });
  }

  async function idle(): Promise<void> {
    while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
  }

  return {
    dispatch,
    notify,
    kick,
    pause: () => void (paused = true),
    stop: () => {
      paused = true;
      stopping.abort(new Error('the receiver is stopping'));
    },
    resume: () => {
      paused = false;
      if (stopping.signal.aborted) stopping = stopController(settings.concurrency);
    },
    dispatchDue,
    retryFailed: retryFailedEvents,
    track,
    idle,
  };
}

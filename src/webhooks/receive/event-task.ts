import { isAbortedBy, isServiceOutage } from '../../errors/index.js';
import type { CheckoutEvent } from '../../schemas/event.js';
import { COMPLETION_RETRIES, eventIdOf, executeRun, type RunSettings, type Task } from '../../runs/index.js';
import type { Store } from '../../store/types.js';
import type { HandlerRegistry } from './event-handlers.js';
import { WebhookHandlerError } from './handler-error.js';
import { parseDelivery } from './parse-delivery.js';
import type { EnvelopeMapper } from './parse-delivery.js';
import { runHandlers, type DeliveryInfo } from './run-handlers.js';

/** The receiver's run settings (its clock: claims, renewals, retries and due times all read it); completions are retried as `COMPLETION_RETRIES` says. */
export interface EventTaskSettings extends Omit<RunSettings, keyof typeof COMPLETION_RETRIES> {
  store: Store;
  handlers: HandlerRegistry;
  /** How a stored body is read back into an event (the receiver's `mapEnvelope`). */
  mapEnvelope: EnvelopeMapper | undefined;
}

/** The handlers' failures of one attempt, made a `WebhookHandlerError` once the runner has decided the retry. */
class HandlerFailures {
  /** Every handler failed only because the service could not be asked (down, rate limited, too slow). */
  readonly outage: boolean;
  constructor(
    readonly event: CheckoutEvent,
    readonly errors: unknown[],
  ) {
    this.outage = errors.every(isServiceOutage);
  }
}

/** Thrown through the runner when handlers failed because the loop stopped: not the attempt's failure. */
class DispatchStopped extends Error {}

/**
 * The task of the run loop that dispatches one stored event: claim its run, run its handlers once
 * (retried with backoff as a unit), report failures. It reads the event back from the store itself
 * unless the loop kept it from its receipt.
 */
export function eventTask(settings: EventTaskSettings): Task {
  const { store, handlers, logger, leaseMs, maxAttempts, clock } = settings;

  async function loadEvent(eventId: string): Promise<CheckoutEvent | string> {
    const stored = await store.getEvent(eventId);
    if (!stored) return 'the event is not in the store';
    if (stored.body === undefined) return 'its payload was pruned (retention.payloadDays)';
    const parsed = parseDelivery(stored.body, settings.mapEnvelope);
    return parsed.ok ? parsed.event : parsed.message;
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

  return async (key, context) => {
    const eventId = eventIdOf(key) ?? key;
    const { signal } = context;
    const result = await executeRun(
      store,
      key,
      {
        ...runSettings,
        signal,
        onLeaseLost: (reason) =>
          logger.warn({ eventId, reason }, `Lost the lease on event ${eventId} while its handlers ran; another worker may run them again.`),
        explain: (error, { attempt: number, retryAt }) =>
          error instanceof HandlerFailures
            ? new WebhookHandlerError(error.event, error.errors, number, error.outage ? undefined : maxAttempts, retryAt)
            : error,
      },
      async (run) => {
        const event = (context.kept as CheckoutEvent | undefined) ?? (await loadEvent(eventId));
        // An event that cannot be rebuilt never will be: given up at once.
        if (typeof event === 'string') return { ok: false, error: event, giveUp: true };
        const delivery: DeliveryInfo = { storedAt: run.createdAt, signal, runNext: context.runNext };
        const errors = await runHandlers(handlers.handlersFor(event.type).map((handler) => () => handler(event, delivery)));
        // Failing because we are stopping (a read given up) is no attempt's failure: thrown past
        // the runner, which then stores nothing and gives the lease back.
        if (errors.length > 0 && errors.every((error) => isAbortedBy(error, signal))) throw new DispatchStopped(String(signal.reason));
        if (errors.length === 0) return { ok: true, value: undefined };
        // A service that cannot be asked (an outage, a rate limit) is no fault of the event: giving
        // up would leave it failed for good after a few minutes' outage, raising run_failed until
        // someone retried it by hand. It is retried at the backoff, at most maxBackoffMs apart.
        const failures = new HandlerFailures(event, errors);
        return { ok: false, error: failures, keepTrying: failures.outage };
      },
    );
    switch (result.status) {
      case 'not-claimed':
        return 'skipped';
      case 'stopped':
        return 'stopped';
      case 'finished':
        if (result.completion === 'lease-lost') {
          logger.warn(
            { eventId, leaseMs },
            `Lease on event ${eventId} ran out before its handlers finished; another worker may run them again. Raise leaseMs.`,
          );
        }
        // Not stored: the run stays claimable once its lease runs out, as after a store failure.
        return result.completion === 'unstored' ? 'error' : 'done';
      case 'retrying':
      case 'failed':
        if (result.error instanceof WebhookHandlerError) await reportFailure(result.error);
        else logger.error({ eventId }, `Cannot dispatch event ${eventId}: ${String(result.error)}`);
        return result.status === 'retrying' ? 'retry' : 'failed';
    }
  };
}

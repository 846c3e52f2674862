import type { CheckoutEvent } from '../schemas/event.js';

/**
 * All the handler failures of one dispatch attempt of one event, passed to `onError`.
 * `errors` holds what each failing handler threw.
 */
export class WebhookHandlerError extends AggregateError {
  override name = 'WebhookHandlerError';
  readonly event: CheckoutEvent;
  /** 1 for the first attempt. */
  readonly attempt: number;
  /** When the next attempt is due; undefined once the run is given up (`failed`, see `retryFailed`). */
  readonly retryAt: string | undefined;

  constructor(event: CheckoutEvent, errors: unknown[], attempt: number, maxAttempts: number, retryAt: string | undefined) {
    const first = errors[0] instanceof Error ? errors[0].message : String(errors[0]);
    super(
      errors,
      `${errors.length} handler(s) failed for event ${event.id} (${event.type}), attempt ${attempt} of ${maxAttempts}: ${first}. ` +
        (retryAt ? `Retrying at ${retryAt}.` : 'Giving up: the run is marked failed; retryFailed() (or the retry command) runs it again.'),
    );
    this.event = event;
    this.attempt = attempt;
    this.retryAt = retryAt;
  }

  get willRetry(): boolean {
    return this.retryAt !== undefined;
  }
}

import type { CheckoutEvent } from '../../schemas/event.js';

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

  /** `maxAttempts` undefined: the attempt failed only because the service could not be asked, which never uses up the attempts. */
  constructor(event: CheckoutEvent, errors: unknown[], attempt: number, maxAttempts: number | undefined, retryAt: string | undefined) {
    const first = (errors[0] instanceof Error ? errors[0].message : String(errors[0])).replace(/\.$/, '');
    const others = errors.length > 1 ? ` (and ${errors.length - 1} other handler(s))` : '';
    // The cause first: it is what a person looks for, and what a cut-off line (a table's error
    // column, the console's) must still show. The event and the attempt follow.
    super(
      errors,
      maxAttempts === undefined
        ? `${first}${others}. Event ${event.id} (${event.type}), attempt ${attempt}: the service could not be asked, so it is retried until it answers; next at ${retryAt}.`
        : `${first}${others}. Event ${event.id} (${event.type}), attempt ${attempt} of ${maxAttempts}: ` +
            (retryAt ? `retrying at ${retryAt}.` : 'given up, the run is marked failed; retryFailed() (or the retry command) runs it again.'),
    );
    this.event = event;
    this.attempt = attempt;
    this.retryAt = retryAt;
  }

  get willRetry(): boolean {
    return this.retryAt !== undefined;
  }
}

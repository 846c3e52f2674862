import type { CheckoutEvent, EventOf, KnownEventType } from '../../schemas/event.js';
import type { WebhookHandlerError } from './handler-error.js';
import type { DeliveryInfo } from './run-handlers.js';

/** A known event type (autocompleted) or any other string: unknown types are dispatched too. */
export type EventName = KnownEventType | (string & {});

/** A handler of events of type `T`: `on('payment.paid', e => e.data.amount)` sees a Payment. */
export type EventHandler<T extends string = string> = (event: EventOf<T>, delivery: DeliveryInfo) => unknown;

/** Gets every failed dispatch attempt's errors, gathered per event. */
export type ErrorHandler = (error: WebhookHandlerError) => unknown;

type AnyHandler = (event: CheckoutEvent, delivery: DeliveryInfo) => unknown;

export interface HandlerRegistry {
  /** Handle events of one type or several. Returns a function that removes the handler. */
  on<T extends EventName>(type: T | readonly T[], handler: EventHandler<T>): () => void;
  /** Handle every event, whatever its type. */
  onAny(handler: EventHandler): () => void;
  /** Hear about handler failures (each attempt). Without one, failures are logged. */
  onError(handler: ErrorHandler): () => void;
  /** Handlers that an event of `type` runs: its own, then the `onAny` ones. */
  handlersFor(type: string): AnyHandler[];
  errorHandlers(): ErrorHandler[];
}

export function createHandlerRegistry(): HandlerRegistry {
  const byType = new Map<string, Set<AnyHandler>>();
  const any = new Set<AnyHandler>();
  const errors = new Set<ErrorHandler>();

  return {
    on(type, handler) {
      const types: readonly string[] = typeof type === 'string' ? [type] : type;
      // Stored untyped: dispatch only calls it with events of the type it was registered for.
      const untyped = handler as AnyHandler;
      for (const name of types) {
        let set = byType.get(name);
        if (!set) byType.set(name, (set = new Set()));
        set.add(untyped);
      }
      return () => {
        for (const name of types) byType.get(name)?.delete(untyped);
      };
    },
    onAny(handler) {
      const untyped = handler as AnyHandler;
      any.add(untyped);
      return () => any.delete(untyped);
    },
    onError(handler) {
      errors.add(handler);
      return () => errors.delete(handler);
    },
    handlersFor(type) {
      return [...(byType.get(type) ?? []), ...any];
    },
    errorHandlers() {
      return [...errors];
    },
  };
}

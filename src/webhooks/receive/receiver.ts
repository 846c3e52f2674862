import type { CheckoutEvent } from '../../schemas/event.js';
import type { Run } from '../../store/types.js';
import { createRunLoop, retryFailed, runKeys, type Task } from '../../runs/index.js';
import { eventTask } from './event-task.js';
import { createDoctor } from '../doctor/create-doctor.js';
import { createHandlerRegistry, type HandlerRegistry } from './event-handlers.js';
import { handleDelivery, type WebhookInput } from './handle-delivery.js';
import { normalizeReceiverOptions, pruneCutoffs, type ReceiverOptions } from './receiver-options.js';
import type { WebhookResult } from './responses.js';
import { createVerifier } from '../verify/verify.js';
import { withMerchantSecrets } from './merchant-secrets.js';
import { every } from '../../timers/index.js';

/** What the adapters need: the core `handle` and the body limit (to stop reading early). */
export interface WebhookEndpoint {
  /** Bodies above this many bytes are refused with 413. */
  readonly maxBodyBytes: number;
  /** Verify one delivery, store it once, and say what to answer. */
  handle(input: WebhookInput): Promise<WebhookResult>;
  /** Called by adapters that manage a lifecycle (the fastify plugin on ready). */
  start?(): Promise<unknown>;
  /** Called by adapters that manage a lifecycle (the fastify plugin on close). */
  stop?(): Promise<void>;
}

export interface WebhookReceiver extends WebhookEndpoint, Pick<HandlerRegistry, 'on' | 'onAny' | 'onError'> {
  /**
   * Start dispatching what is due (events left by a crash, due retries) and the retry and prune
   * timers (unref'd). Resolves as soon as the first `dispatchConcurrency` are under way, with how
   * many were started: a large backlog never delays the server's start.
   */
  start(): Promise<number>;
  /** Stop the timers and wait for in-flight dispatches. Events received later are stored, and dispatched by the next `start()`. */
  stop(): Promise<void>;
  /** Dispatch every due run once; resolves with how many were dispatched. */
  dispatchDue(): Promise<number>;
  /** Put a failed event (or all failed events) back in line, due now; resolves with how many. */
  retryFailed(eventId?: string): Promise<number>;
  /** Apply the retention settings now. */
  prune(now?: Date): Promise<{ payloadsPruned: number; eventsForgotten: number }>;
  /** Resolves once no dispatch is in flight (handy in tests). */
  idle(): Promise<void>;
  /**
   * Run the store's runs of `kind` in this receiver's loop too, through `task` (its due runs, and
   * those a handler asks to run next): how `attachFulfillment` has one loop run the engine's handlers.
   */
  runTask(kind: Run['kind'], task: Task): void;
}

/**
 * The webhook receiver: verify the raw bytes, store each event once (durable before the 2xx), then
 * dispatch to handlers with retries. Adapters (`checkoutWebhooks`, `createNodeHandler`,
 * `createWebHandler`) only move bytes in and out of `handle`.
 * @example
 * const receiver = createReceiver({ store, secrets: ['whsec_…'] });
 * receiver.on('payment.paid', async (event) => fulfil(event.data.id, event.data.amount));
 * await receiver.start();
 */
export function createReceiver(receiverOptions: ReceiverOptions): WebhookReceiver {
  const options = normalizeReceiverOptions(receiverOptions);
  const { store, logger } = options;
  const verifyConfigured = createVerifier(options);
  const verify = options.merchantSecrets ? withMerchantSecrets(verifyConfigured, { ...options, merchantSecrets: options.merchantSecrets }) : verifyConfigured;
  const doctor = options.doctor ? createDoctor({ ...options, doctor: options.doctor }) : undefined;
  const handlers = createHandlerRegistry();

  // The one run loop: this receiver's event dispatch, and whatever tasks are added (`runTask`).
  const loop = createRunLoop({
    store,
    logger,
    clock: options.clock,
    concurrency: options.dispatchConcurrency,
    tasks: {
      event: eventTask({
        store,
        handlers,
        logger,
        owner: options.owner,
        leaseMs: options.leaseMs,
        maxAttempts: options.maxAttempts,
        backoffMs: options.backoffMs,
        maxBackoffMs: options.maxBackoffMs,
        clock: options.clock,
        mapEnvelope: options.mapEnvelope,
      }),
    },
  });

  let stopped = false;
  const timers: Array<() => void> = [];

  /**
   * Run `task` every `ms` in the background; its runs count as in-flight work for `stop()`. A store
   * that stays down fails every run alike: that is logged once, then again only when it changes, and
   * the first run that works again says so.
   */
  function background(ms: number, task: () => Promise<unknown>): void {
    let failing: string | undefined;
    timers.push(
      every(
        ms,
        async () => {
          await task();
          if (failing === undefined) return;
          failing = undefined;
          logger.info('Webhook receiver background task works again');
        },
        (error) => {
          const message = String(error);
          if (message === failing) return logger.debug({ err: message }, `Webhook receiver background task failed again: ${message}`);
          failing = message;
          logger.error({ err: message }, `Webhook receiver background task failed: ${message}`);
        },
        (run) => loop.track(run),
      ),
    );
  }

  function onStored(event: CheckoutEvent): void {
    if (!options.dispatch || stopped) return;
    // Nothing on the ack path but a wake-up: the event is dispatched from the store in its turn.
    loop.notify(runKeys.event(event.id), event);
  }

  async function prune(now = options.clock()) {
    if (!options.retention) return { payloadsPruned: 0, eventsForgotten: 0 };
    return store.prune({ ...pruneCutoffs(options.retention, now), now });
  }

  return {
    maxBodyBytes: options.maxBodyBytes,
    handle: (input) => handleDelivery({ options, verify, onStored, doctor }, input),
    on: handlers.on,
    onAny: handlers.onAny,
    onError: handlers.onError,
    async start() {
      stopped = false;
      loop.resume();
      if (timers.length > 0) return 0;
      if (options.retention) background(options.retention.intervalMs, () => prune());
      if (!options.dispatch) return 0;
      // The timer only starts what is due (retries, crashed workers' events); completions keep the pump going.
      background(options.pollIntervalMs, () => loop.kick());
      // Start the backlog a crash left, without waiting for it: the adapter must listen at once.
      return loop.kick();
    },
    async stop() {
      stopped = true;
      // Dispatches waiting on something slow (a read held back by the service's Retry-After) give up.
      loop.stop();
      for (const stopTimer of timers.splice(0)) stopTimer();
      await loop.idle();
    },
    dispatchDue: () => loop.drain(),
    runTask: (kind, task) => loop.addTask(kind, task),
    async retryFailed(eventId) {
      const count = await retryFailed(store, { kind: 'event', key: eventId === undefined ? undefined : runKeys.event(eventId), clock: options.clock });
      if (count > 0 && options.dispatch && !stopped) void loop.track(loop.kick());
      return count;
    },
    prune,
    idle: () => loop.idle(),
  };
}

import type { Logger } from '../../log/logger.js';
import { consoleLogger } from '../../log/console-logger.js';
import type { Environment } from '../../schemas/common.js';
import type { CheckoutEvent } from '../../schemas/event.js';
import { handleDelivery, type DeliveryOptions, type EventSink } from './handle-delivery.js';
import type { EnvelopeMapper } from './parse-delivery.js';
import { positive, requireEventSink } from './positive-option.js';
import type { WebhookEndpoint } from './receiver.js';
import type { VerifierOptions } from '../verify/verifier-options.js';
import { createWebVerifier } from '../verify/web-verify.js';

/**
 * @example
 * createWebReceiver({ store, secrets: env.CHECKOUT_WEBHOOK_SECRET.split(/[\s,]+/), environment: 'live' })
 */
export interface WebReceiverOptions extends VerifierOptions {
  /**
   * Where events are stored once (durable before the 200). Any checkout-kit `Store` works; on a
   * runtime without Node, anything with `insertEvent` (deduping by event id) and `insertDeadLetter`.
   */
  store: EventSink;
  /** Refuse (403) events of the other environment. @default undefined (accept both) */
  environment?: Environment | undefined;
  /** Larger bodies get 413 and nothing is stored. @default 65536 */
  maxBodyBytes?: number;
  /** Map another service's envelope to `{ id, type, createdAt, environment, data }`. @default identity */
  mapEnvelope?: EnvelopeMapper;
  /** @default consoleLogger() (JSON lines on the console, secrets redacted) */
  logger?: Logger;
  /** The clock of signature timestamps and receive times. @default () => new Date() */
  clock?: () => Date;
  /**
   * Called once per event, when it is stored for the first time (never for a duplicate), before
   * the 200 is sent. Hand it to your queue here (`ctx.waitUntil(env.QUEUE.send(event))`), or leave
   * the stored events to a Node process running `createReceiver` on the same store. @default none
   */
  onStored?: (event: CheckoutEvent) => void;
}

/**
 * The receiver's core without Node: verify the raw bytes on WebCrypto, store each event once, answer.
 * It does not dispatch handlers (no timers or leases on an edge runtime): a Node process with
 * `createReceiver` on the same store does, or `onStored` hands each new event on. Where Node's
 * built-ins exist (Node, Bun, Deno), prefer `createReceiver`, which also dispatches.
 * @example
 * import { createWebHandler, createWebReceiver } from 'checkout-kit/web';
 * export default { fetch: createWebHandler(createWebReceiver({ store, secrets })) };
 */
export function createWebReceiver(options: WebReceiverOptions): WebhookEndpoint {
  const verify = createWebVerifier(options);
  const normalized: DeliveryOptions = {
    store: requireEventSink(options.store, 'createWebReceiver'),
    logger: options.logger ?? consoleLogger(),
    maxBodyBytes: positive('maxBodyBytes', options.maxBodyBytes ?? 65_536),
    environment: options.environment,
    mapEnvelope: options.mapEnvelope,
    clock: options.clock ?? (() => new Date()),
  };
  const onStored = options.onStored ?? (() => {});
  return {
    maxBodyBytes: normalized.maxBodyBytes,
    handle: (input) => handleDelivery({ options: normalized, verify, onStored }, input),
  };
}

import type { WebhookEndpoint } from '../webhooks/receive/receiver.js';
import type { WebhookResult } from '../webhooks/receive/responses.js';

/**
 * The same receiver, telling `observe` how each delivery was answered (for metrics and alerts) and
 * how long the receiver took to answer it (verify and store: the acknowledgement's latency, in ms
 * of the monotonic clock). The answer is unchanged and an observer that throws is ignored:
 * watching never costs a delivery.
 * @example
 * await app.register(checkoutWebhooks, { receiver: observeDeliveries(receiver, metrics.observeDelivery) });
 */
export function observeDeliveries<R extends WebhookEndpoint>(receiver: R, observe: (result: WebhookResult, durationMs: number) => void): R {
  return {
    ...receiver,
    async handle(input) {
      const started = performance.now();
      const result = await receiver.handle(input);
      try {
        observe(result, performance.now() - started);
      } catch {
        // An observer's bug must not turn an acknowledged delivery into an error.
      }
      return result;
    },
  };
}

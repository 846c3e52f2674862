import type { WebhookEndpoint } from '../webhooks/receiver.js';
import type { WebhookResult } from '../webhooks/responses.js';

/**
 * The same receiver, telling `observe` how each delivery was answered (for metrics and alerts).
 * The answer is unchanged and an observer that throws is ignored: watching never costs a delivery.
 * @example
 * await app.register(checkoutWebhooks, { receiver: observeDeliveries(receiver, metrics.observeDelivery) });
 */
export function observeDeliveries<R extends WebhookEndpoint>(receiver: R, observe: (result: WebhookResult) => void): R {
  return {
    ...receiver,
    async handle(input) {
      const result = await receiver.handle(input);
      try {
        observe(result);
      } catch {
        // An observer's bug must not turn an acknowledged delivery into an error.
      }
      return result;
    },
  };
}

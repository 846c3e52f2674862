import type { CheckoutKitConfig } from '../config/index.js';
import type { Logger } from '../log/index.js';
import { CheckoutClient, type CheckoutClientOptions } from './checkout-client.js';

/**
 * The merchant client the configuration allows, or undefined when it has no base URL or no
 * merchant/invoice key (a receiver can still run then, trusting verified event data). `overrides.onCall`
 * lets `serve` count the calls for its metrics.
 */
export function clientFromConfig(config: CheckoutKitConfig, logger?: Logger, overrides: Pick<CheckoutClientOptions, 'fetch' | 'onCall'> = {}): CheckoutClient | undefined {
  if (!config.baseUrl || !(config.apiKey || config.invoiceKey)) return undefined;
  return new CheckoutClient({
    baseUrl: config.baseUrl,
    apiKey: config.apiKey,
    signingSecret: config.signingSecret,
    invoiceKey: config.invoiceKey,
    maxRps: config.maxRps,
    logger,
    ...overrides,
  });
}

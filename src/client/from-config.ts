import type { CheckoutKitConfig } from '../config/index.js';
import type { Logger } from '../log/index.js';
import { CheckoutClient, type CheckoutClientOptions } from './checkout-client.js';

/** Whether the configuration names the service: its base URL and a merchant or invoice key. */
export function configuresService<C extends Pick<CheckoutKitConfig, 'baseUrl' | 'apiKey' | 'invoiceKey'>>(config: C): config is C & { baseUrl: string } {
  return Boolean(config.baseUrl && (config.apiKey || config.invoiceKey));
}

/**
 * The merchant client the configuration allows, or undefined when it does not name the service
 * (`configuresService`; `serve` refuses to start then). `overrides.onCall` lets `serve` count the
 * calls for its metrics.
 */
export function clientFromConfig(config: CheckoutKitConfig, logger?: Logger, overrides: Pick<CheckoutClientOptions, 'fetch' | 'onCall'> = {}): CheckoutClient | undefined {
  if (!configuresService(config)) return undefined;
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

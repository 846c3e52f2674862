import type { CheckoutKitConfig } from '../config/index.js';
import type { Logger } from '../log/index.js';
import { CheckoutClient, type CheckoutClientOptions } from './checkout-client.js';
import { PartnerClient, type PartnerClientOptions } from './partner-client.js';

/** Whether the configuration names the service: its base URL and a merchant, invoice or partner key. */
export function configuresService<C extends Pick<CheckoutKitConfig, 'baseUrl' | 'apiKey' | 'invoiceKey'> & Partial<Pick<CheckoutKitConfig, 'partnerApiKey'>>>(
  config: C,
): config is C & { baseUrl: string } {
  return Boolean(config.baseUrl && (config.apiKey || config.invoiceKey || config.partnerApiKey));
}

/**
 * A partner platform's client, when the configuration holds a partner's keys and no merchant key:
 * it creates each tenant's payments and reads them (see `PartnerClient.payments.get`).
 */
export function partnerFromConfig(
  config: CheckoutKitConfig,
  logger?: Logger,
  overrides: Pick<PartnerClientOptions, 'fetch' | 'onCall'> = {},
): PartnerClient | undefined {
  if (!config.baseUrl || !config.partnerApiKey || !config.partnerSigningSecret || config.apiKey || config.invoiceKey) return undefined;
  return new PartnerClient({
    baseUrl: config.baseUrl,
    apiKey: config.partnerApiKey,
    signingSecret: config.partnerSigningSecret,
    maxRps: config.maxRps,
    logger,
    ...overrides,
  });
}

/**
 * The merchant client the configuration allows, or undefined when it does not name the service
 * (`configuresService`; `serve` refuses to start then). `overrides.onCall` lets `serve` count the
 * calls for its metrics.
 */
export function clientFromConfig(
  config: CheckoutKitConfig,
  logger?: Logger,
  overrides: Pick<CheckoutClientOptions, 'fetch' | 'onCall'> = {},
): CheckoutClient | undefined {
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

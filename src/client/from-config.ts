import type { CheckoutKitConfig } from '../config/index.js';
import { roleOf } from '../config/variables.js';
import type { Logger } from '../log/index.js';
import { CheckoutClient, type CheckoutClientOptions } from './checkout-client.js';
import { PartnerClient, type PartnerClientOptions } from './partner-client.js';

type ServiceSettings = Pick<CheckoutKitConfig, 'baseUrl' | 'apiKey' | 'invoiceKey'> &
  Partial<Pick<CheckoutKitConfig, 'partnerApiKey' | 'partnerSigningSecret'>>;

/** A merchant's shop: the base URL and a merchant or invoice key. */
const namesMerchant = (config: ServiceSettings): boolean => Boolean(config.baseUrl && (config.apiKey || config.invoiceKey));

/** A partner platform (`roleOf`) with the base URL and both of the partner's keys. */
const namesPartner = (config: ServiceSettings): boolean => Boolean(config.baseUrl && config.partnerSigningSecret) && roleOf(config) === 'partner';

/**
 * Whether the configuration names the service so that a client can read from it: a merchant's
 * shop (`clientFromConfig`) or a partner platform (`partnerFromConfig`).
 */
export function configuresService<C extends ServiceSettings>(config: C): config is C & { baseUrl: string } {
  return namesMerchant(config) || namesPartner(config);
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
  if (!namesPartner(config)) return undefined;
  return new PartnerClient({
    baseUrl: config.baseUrl!,
    apiKey: config.partnerApiKey!,
    signingSecret: config.partnerSigningSecret!,
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
  if (!namesMerchant(config)) return undefined;
  return new CheckoutClient({
    baseUrl: config.baseUrl!,
    apiKey: config.apiKey,
    signingSecret: config.signingSecret,
    invoiceKey: config.invoiceKey,
    maxRps: config.maxRps,
    logger,
    ...overrides,
  });
}

import { CONNECTION_VARIABLES, type CheckoutKitConfig, type ConnectionSetting, type ConnectionVariable } from '../config/index.js';
import type { SandboxCredentials } from '../sandbox/index.js';

/** The sandbox's URL, webhook secret and its test merchant's keys: what a shop connects with. */
function sandboxSettings(credentials: SandboxCredentials): Record<ConnectionSetting, string> {
  const { merchant } = credentials.test;
  return {
    baseUrl: credentials.baseUrl.replace(/\/+$/, ''),
    webhookSecret: credentials.webhookSecret,
    apiKey: merchant.apiKey,
    signingSecret: merchant.signingSecret,
    invoiceKey: merchant.invoiceKey,
  };
}

const SETTINGS = Object.keys(CONNECTION_VARIABLES) as ConnectionSetting[];

/**
 * The `.env` values that connect a shop to the sandbox as its test merchant (`CHECKOUT_BASE_URL`,
 * `CHECKOUT_WEBHOOK_SECRET`, `CHECKOUT_API_KEY`, `CHECKOUT_SIGNING_SECRET`, `CHECKOUT_INVOICE_KEY`).
 */
export function sandboxEnv(credentials: SandboxCredentials): Record<ConnectionVariable, string> {
  const settings = sandboxSettings(credentials);
  return Object.fromEntries(SETTINGS.map((setting) => [CONNECTION_VARIABLES[setting], settings[setting]])) as Record<ConnectionVariable, string>;
}

/** A connection variable whose configured value is not the sandbox's. */
export interface SandboxMismatch {
  variable: ConnectionVariable;
  problem: 'unset' | 'differs';
}

/**
 * The connection variables of `config` that do not match the sandbox's credentials. A webhook
 * secret matches when it is one of the configured ones (a rotation lists several).
 */
export function sandboxMismatches(config: CheckoutKitConfig, credentials: SandboxCredentials): SandboxMismatch[] {
  const expected = sandboxSettings(credentials);
  const configured: Record<ConnectionSetting, string | readonly string[] | undefined> = {
    baseUrl: config.baseUrl,
    webhookSecret: config.webhookSecrets.length > 0 ? config.webhookSecrets : undefined,
    apiKey: config.apiKey,
    signingSecret: config.signingSecret,
    invoiceKey: config.invoiceKey,
  };
  return SETTINGS.flatMap((setting): SandboxMismatch[] => {
    const value = configured[setting];
    const variable = CONNECTION_VARIABLES[setting];
    if (value === undefined) return [{ variable, problem: 'unset' }];
    const matches = typeof value === 'string' ? value === expected[setting] : value.includes(expected[setting]);
    return matches ? [] : [{ variable, problem: 'differs' }];
  });
}

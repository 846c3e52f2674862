import {
  CONNECTION_VARIABLES,
  ROLE_SETTINGS,
  roleOf,
  type CheckoutKitConfig,
  type ConnectionRole,
  type ConnectionSetting,
  type ConnectionVariable,
} from '../config/index.js';
import type { SandboxCredentials } from '../sandbox/index.js';

/** The sandbox's URL, webhook secret, and its test merchant's and test partner's keys. */
function sandboxSettings(credentials: SandboxCredentials): Record<ConnectionSetting, string> {
  const { merchant, partner } = credentials.test;
  return {
    baseUrl: credentials.baseUrl.replace(/\/+$/, ''),
    webhookSecret: credentials.webhookSecret,
    apiKey: merchant.apiKey,
    signingSecret: merchant.signingSecret,
    invoiceKey: merchant.invoiceKey,
    partnerApiKey: partner.apiKey,
    partnerSigningSecret: partner.signingSecret,
  };
}

/**
 * The `.env` values that connect to the sandbox: as its test merchant (`CHECKOUT_BASE_URL`,
 * `CHECKOUT_WEBHOOK_SECRET`, `CHECKOUT_API_KEY`, `CHECKOUT_SIGNING_SECRET`, `CHECKOUT_INVOICE_KEY`),
 * or as its test partner (the partner's key and secret, and the merchant's three emptied).
 */
export function sandboxEnv(credentials: SandboxCredentials, role: ConnectionRole = 'merchant'): Partial<Record<ConnectionVariable, string>> {
  const settings = sandboxSettings(credentials);
  const own: readonly ConnectionSetting[] = ROLE_SETTINGS[role];
  const emptied = role === 'partner' ? ROLE_SETTINGS.merchant.filter((setting) => !own.includes(setting)) : [];
  return Object.fromEntries([
    ...own.map((setting) => [CONNECTION_VARIABLES[setting], settings[setting]]),
    ...emptied.map((setting) => [CONNECTION_VARIABLES[setting], '']),
  ]) as Partial<Record<ConnectionVariable, string>>;
}

/** A connection variable whose configured value is not the sandbox's. */
export interface SandboxMismatch {
  variable: ConnectionVariable;
  problem: 'unset' | 'differs';
}

/**
 * The connection variables of `config`'s role (`roleOf`) that do not match the sandbox's
 * credentials. A webhook secret matches when it is one of the configured ones (a rotation lists several).
 */
export function sandboxMismatches(config: CheckoutKitConfig, credentials: SandboxCredentials): SandboxMismatch[] {
  const expected = sandboxSettings(credentials);
  const configured: Record<ConnectionSetting, string | readonly string[] | undefined> = {
    baseUrl: config.baseUrl,
    webhookSecret: config.webhookSecrets.length > 0 ? config.webhookSecrets : undefined,
    apiKey: config.apiKey,
    signingSecret: config.signingSecret,
    invoiceKey: config.invoiceKey,
    partnerApiKey: config.partnerApiKey,
    partnerSigningSecret: config.partnerSigningSecret,
  };
  return ROLE_SETTINGS[roleOf(config)].flatMap((setting): SandboxMismatch[] => {
    const value = configured[setting];
    const variable = CONNECTION_VARIABLES[setting];
    if (value === undefined) return [{ variable, problem: 'unset' }];
    const matches = typeof value === 'string' ? value === expected[setting] : value.includes(expected[setting]);
    return matches ? [] : [{ variable, problem: 'differs' }];
  });
}

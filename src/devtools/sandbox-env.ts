import { CONNECTION_VARIABLES, type ConnectionSetting, type ConnectionVariable } from '../config/index.js';
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

/**
 * The names of the variables that connect a shop to the service: `loadConfig` reads them, and
 * whatever writes or compares them (the sandbox's `--write-env`, `init`, `doctor`) names them from here.
 */
export const CONNECTION_VARIABLES = {
  baseUrl: 'CHECKOUT_BASE_URL',
  webhookSecret: 'CHECKOUT_WEBHOOK_SECRET',
  apiKey: 'CHECKOUT_API_KEY',
  signingSecret: 'CHECKOUT_SIGNING_SECRET',
  invoiceKey: 'CHECKOUT_INVOICE_KEY',
} as const;

/** What each connection variable holds. */
export type ConnectionSetting = keyof typeof CONNECTION_VARIABLES;

/** One connection variable's name. */
export type ConnectionVariable = (typeof CONNECTION_VARIABLES)[ConnectionSetting];

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
  partnerApiKey: 'CHECKOUT_PARTNER_API_KEY',
  partnerSigningSecret: 'CHECKOUT_PARTNER_SIGNING_SECRET',
} as const;

/** What each connection variable holds. */
export type ConnectionSetting = keyof typeof CONNECTION_VARIABLES;

/** One connection variable's name. */
export type ConnectionVariable = (typeof CONNECTION_VARIABLES)[ConnectionSetting];

/** Who connects: a merchant's shop, or a partner platform (the partner's keys and no merchant key). */
export type ConnectionRole = 'merchant' | 'partner';

/**
 * The settings each role connects with. A partner platform has no merchant key: with one set,
 * the toolkit would act as that merchant, so the sandbox's `--write-env --partner` empties them.
 */
export const ROLE_SETTINGS = {
  merchant: ['baseUrl', 'webhookSecret', 'apiKey', 'signingSecret', 'invoiceKey'],
  partner: ['baseUrl', 'webhookSecret', 'partnerApiKey', 'partnerSigningSecret'],
} as const satisfies Record<ConnectionRole, readonly ConnectionSetting[]>;

/** The role a configuration connects as: a partner platform holds the partner's key and no merchant's key (an invoice key is one). */
export const roleOf = (config: { apiKey?: string | undefined; invoiceKey?: string | undefined; partnerApiKey?: string | undefined }): ConnectionRole =>
  config.partnerApiKey && !config.apiKey && !config.invoiceKey ? 'partner' : 'merchant';

/** The variables one role's connection is made of, by name. */
export const roleVariables = (role: ConnectionRole): ConnectionVariable[] => ROLE_SETTINGS[role].map((setting) => CONNECTION_VARIABLES[setting]);

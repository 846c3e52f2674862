/** Configuration from `CHECKOUT_*` environment variables and `.env` (the environment wins over the file). */
export { loadConfig, publicUrlOf, DEFAULT_STORE } from './env.js';
export type { CheckoutKitConfig, LoadConfigOptions } from './env.js';
export { checkKey, environmentOf, describeKey } from './keys.js';
export { parseWebhookScheme } from './webhook-scheme.js';
export { parseUnderpayTolerance, parseStatusMap, describeOutcomeRules } from './outcome-rules.js';
export type { OutcomeRules } from './outcome-rules.js';
export type { KeyKind } from './keys.js';
export { CONNECTION_VARIABLES, ROLE_SETTINGS, roleOf, roleVariables } from './variables.js';
export type { ConnectionRole, ConnectionSetting, ConnectionVariable } from './variables.js';
export { setDotenvValues, writeDotenvValues } from './dotenv-file.js';
export type { DotenvWrite } from './dotenv-file.js';

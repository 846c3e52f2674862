/** Configuration from environment variables and `.env` (contract.md section 2). */
export { loadConfig, publicUrlOf, DEFAULT_STORE } from './env.js';
export type { CheckoutKitConfig, LoadConfigOptions } from './env.js';
export { checkKey, environmentOf, describeKey } from './keys.js';
export { parseWebhookScheme } from './webhook-scheme.js';
export { parseUnderpayTolerance, parseStatusMap, describeOutcomeRules } from './outcome-rules.js';
export type { OutcomeRules } from './outcome-rules.js';
export type { KeyKind } from './keys.js';

/** Partner platforms: one deployment that onboards its tenants as merchants and takes payments for all of them. */
export { SecretsBox, SecretsKeyError } from './secrets-box.js';
export { tenantReader } from './tenant-reader.js';
export { tenantWebhookSecrets } from './tenant-webhook-secrets.js';
export {
  saveTenantCredentials,
  loadTenantCredentials,
  rekeyTenantCredentials,
  TenantCredentialsSchema,
  TENANT_CREDENTIALS_SHAPE,
  type TenantCredentials,
} from './tenant-credentials.js';
export { onboardMerchant, OnboardInputSchema, type OnboardInput, type OnboardDeps, type OnboardResult } from './onboard-merchant.js';

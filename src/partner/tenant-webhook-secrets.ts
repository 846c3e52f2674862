import type { Store } from '../store/index.js';
import type { MerchantSecrets } from '../webhooks/receive/merchant-secrets.js';
import type { SecretsBox } from './secrets-box.js';
import { openTenantCredentials } from './tenant-credentials.js';

/**
 * The receiver's `merchantSecrets` on a platform that stores some tenants' own webhook secrets
 * (`merchants credentials`): the secret of the tenant onboarded as the merchant a delivery names,
 * read from the store each time, so a secret stored or rotated by another process counts at once.
 */
export function tenantWebhookSecrets(deps: { store: Store; box: SecretsBox }): MerchantSecrets {
  return async (merchantId) => {
    const tenant = await deps.store.findTenantByMerchantId(merchantId);
    if (tenant?.status !== 'created') return undefined;
    const stored = await deps.store.getTenantCredentials(tenant.tenantId, tenant.environment);
    const webhookSecret = stored && openTenantCredentials(deps.box, stored).webhookSecret;
    return webhookSecret === undefined ? undefined : [webhookSecret];
  };
}

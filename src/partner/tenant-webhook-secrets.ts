import type { Store } from '../store/index.js';
import type { MerchantSecrets } from '../webhooks/receive/merchant-secrets.js';
import type { SecretsBox } from './secrets-box.js';
import { openTenantCredentials } from './tenant-credentials.js';

/**
 * The receiver's `merchantSecrets` on a platform that stores some tenants' own webhook secrets
 * (`merchants credentials`): the secret of the tenant onboarded as the merchant a delivery names.
 * Each sealed row is opened once, and again only when it changes.
 */
export function tenantWebhookSecrets(deps: { store: Store; box: SecretsBox }): MerchantSecrets {
  const opened = new Map<string, { sealed: string; secrets: readonly string[] | undefined }>();
  return async (merchantId) => {
    const tenant = await deps.store.findTenantByMerchantId(merchantId);
    if (tenant?.status !== 'created') return undefined;
    const stored = await deps.store.getTenantCredentials(tenant.tenantId, tenant.environment);
    if (!stored) return undefined;
    const known = opened.get(merchantId);
    if (known?.sealed === stored.sealed) return known.secrets;
    const { webhookSecret } = openTenantCredentials(deps.box, stored);
    const secrets = webhookSecret === undefined ? undefined : [webhookSecret];
    opened.set(merchantId, { sealed: stored.sealed, secrets });
    return secrets;
  };
}

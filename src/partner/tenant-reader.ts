import { CheckoutClient, type PartnerClient } from '../client/index.js';
import type { ResourceReader } from '../fulfillment/engine-options.js';
import type { Store } from '../store/index.js';
import type { SecretsBox } from './secrets-box.js';
import { tenantOfOrderKey } from '../domain/index.js';
import { openTenantCredentials } from './tenant-credentials.js';

/** A tenant's own client, and the merchant its key authenticates as. */
interface Own {
  client: CheckoutClient;
  merchantId: string;
}

/**
 * The engine's reader on a platform that stores some tenants' own credentials: a payment created
 * for such a tenant is read with that tenant's merchant key (the service then answers only for the
 * tenant's own payments); every other read uses the partner's keys. All reads share the partner
 * client's rate limiter.
 */
export function tenantReader(deps: { store: Store; partner: PartnerClient; box: SecretsBox; baseUrl: string }): ResourceReader {
  const clients = new Map<string, { sealedFor: string; own: Own }>();

  /** The tenant's own client and merchant, when the platform stores its credentials for the payment's environment. */
  async function ownClientOf(paymentId: string): Promise<Own | undefined> {
    const record = await deps.store.getResource('payment', paymentId);
    const tenantId = record?.orderId === undefined ? undefined : tenantOfOrderKey(record.orderId);
    if (!tenantId || !record?.environment) return undefined;
    const stored = await deps.store.getTenantCredentials(tenantId, record.environment);
    if (!stored) return undefined;
    const key = `${tenantId}/${record.environment}`;
    const cached = clients.get(key);
    if (cached?.sealedFor === stored.sealed) return cached.own;
    // The sealed row just read is opened as it is: no second read of it.
    const tenant = await deps.store.getTenantMerchant(tenantId, record.environment);
    if (!tenant?.merchantId) return undefined;
    const { apiKey, signingSecret } = openTenantCredentials(deps.box, stored);
    // A tenant whose webhook secret alone is stored is read with the partner's keys.
    if (apiKey === undefined || signingSecret === undefined) return undefined;
    const own = {
      client: new CheckoutClient({ baseUrl: deps.baseUrl, apiKey, signingSecret, rateLimiter: deps.partner.rateLimiter }),
      merchantId: tenant.merchantId,
    };
    clients.set(key, { sealedFor: stored.sealed, own });
    return own;
  }

  return {
    payments: {
      async get(id, options) {
        const own = await ownClientOf(id);
        if (!own) return deps.partner.payments.get(id, options);
        // The service answered a read made with the merchant's own key: the payment is that merchant's.
        const payment = await own.client.payments.get(id, options);
        return { ...payment, merchantId: (payment as { merchantId?: string }).merchantId ?? own.merchantId };
      },
    },
    invoices: { get: (id) => deps.partner.invoices.get(id) },
  };
}

import { PartnerClient } from '../../client/index.js';
import { onboardMerchant } from '../../partner/index.js';
import { EnvironmentSchema } from '../../schemas/index.js';
import type { TenantMerchant } from '../../store/index.js';
import { notInStore } from '../exit.js';
import { wholeNumber } from '../flags.js';
import { output, table, type CliIO } from '../io.js';
import { withStore } from '../with-store.js';

export interface OnboardFlags {
  tenant: string;
  name: string;
  email: string;
  json?: boolean;
}

export interface MerchantsListFlags {
  limit: string;
  json?: boolean;
}

const row = (t: TenantMerchant) => ({
  tenant: t.tenantId,
  environment: t.environment,
  merchant: t.merchantId ?? '-',
  status: t.status,
  name: t.name,
  email: t.email,
  since: t.createdAt,
});
const COLUMNS = ['tenant', 'environment', 'merchant', 'status', 'name', 'email', 'since'];

/** `checkout-kit merchants onboard`: the tenant's merchant, created at most once. */
export async function onboard(flags: OnboardFlags, io: CliIO): Promise<void> {
  // Checked before the store is opened: a missing key leaves nothing behind.
  const partner = PartnerClient.fromEnv({ env: io.env, cwd: io.cwd });
  const { tenant, created } = await withStore(
    io,
    (store) => onboardMerchant({ store, partner }, { tenantId: flags.tenant, name: flags.name, email: flags.email }),
    { create: true },
  );
  output(
    io,
    flags.json ?? false,
    tenant,
    (t) => `tenant ${t.tenantId} ${created ? 'onboarded' : 'was already onboarded'}: merchant ${t.merchantId} (${t.environment})`,
  );
}

/** `checkout-kit merchants list`. */
export async function listMerchants(flags: MerchantsListFlags, io: CliIO): Promise<void> {
  const limit = wholeNumber('--limit', { min: 1 })(flags.limit);
  const rows = await withStore(io, (store) => store.listTenantMerchants({ limit }));
  output(io, flags.json ?? false, rows, (list) => table(list.map(row), COLUMNS));
}

/** `checkout-kit merchants show <tenant or merchant id>`. */
export async function showMerchant(id: string, flags: { json?: boolean }, io: CliIO): Promise<void> {
  const found = await withStore(io, async (store) => {
    const byMerchant = await store.findTenantByMerchantId(id);
    if (byMerchant) return [byMerchant];
    const byTenant = await Promise.all(EnvironmentSchema.options.map((environment) => store.getTenantMerchant(id, environment)));
    return byTenant.filter((t): t is TenantMerchant => t !== undefined);
  });
  if (found.length === 0) throw notInStore('tenant or merchant', id, '`checkout-kit merchants list`');
  output(io, flags.json ?? false, found, (list) => table(list.map(row), COLUMNS));
}

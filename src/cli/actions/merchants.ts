import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { PartnerClient } from '../../client/index.js';
import { onboardMerchant, rekeyTenantCredentials, saveTenantCredentials, SecretsBox, TENANT_CREDENTIALS_SHAPE } from '../../partner/index.js';
import { readVariables } from '../../config/environment.js';
import { TenantIdSchema } from '../../schemas/common.js';
import { EnvironmentSchema, isUuid } from '../../schemas/index.js';
import type { TenantMerchant } from '../../store/index.js';
import { notInStore, UsageError } from '../exit.js';
import { wholeNumber } from '../flags.js';
import { output, outputList, readInput, table, writeLine, type CliIO } from '../io.js';
import { withStore } from '../with-store.js';

export interface OnboardFlags {
  tenant: string;
  name: string;
  email: string;
  json?: boolean;
}

export interface CredentialsFlags {
  tenant: string;
  fromFile?: string;
  clear?: boolean;
  environment?: string;
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
  // In the order tenants were onboarded.
  const rows = await withStore(io, (store) => store.listTenantMerchants({ limit: limit + 1 }));
  outputList(io, flags.json ?? false, rows, limit, (list) => table(list.map(row), COLUMNS), 'first');
}

/** `checkout-kit merchants show <tenant or merchant id>`: with which keys its payments are read (never the keys themselves). */
export async function showMerchant(id: string, flags: { json?: boolean }, io: CliIO): Promise<void> {
  const found = await withStore(io, async (store) => {
    // The service writes ids in lower case; an operator may paste one in capitals.
    const byMerchant = (await store.findTenantByMerchantId(id)) ?? (isUuid(id) ? await store.findTenantByMerchantId(id.toLowerCase()) : undefined);
    const byTenant = byMerchant
      ? [byMerchant]
      : (await Promise.all(EnvironmentSchema.options.map((environment) => store.getTenantMerchant(id, environment)))).filter(
          (t): t is TenantMerchant => t !== undefined,
        );
    return Promise.all(
      byTenant.map(async (tenant) => {
        const stored = await store.getTenantCredentials(tenant.tenantId, tenant.environment);
        return { ...tenant, credentials: stored ? { keyId: stored.keyId, updatedAt: stored.updatedAt } : null };
      }),
    );
  });
  if (found.length === 0) throw notInStore('tenant or merchant', id, '`checkout-kit merchants list`');
  output(io, flags.json ?? false, found, (list) =>
    table(
      list.map((t) => ({ ...row(t), reads: t.credentials ? `own credentials (sealed, key ${t.credentials.keyId})` : "partner's keys" })),
      [...COLUMNS, 'reads'],
    ),
  );
}

/** The box of CHECKOUT_SECRETS_KEY (from the environment or `.env`). */
function secretsBox(io: CliIO): SecretsBox {
  return SecretsBox.fromVariable(readVariables({ env: io.env, cwd: io.cwd })('CHECKOUT_SECRETS_KEY'));
}

/** `checkout-kit merchants credentials --tenant ID`: store (or `--clear`) a tenant's own credentials, sealed. */
export async function credentials(flags: CredentialsFlags, io: CliIO): Promise<void> {
  const environment = EnvironmentSchema.optional().safeParse(flags.environment);
  if (!environment.success) throw new UsageError('--environment must be test or live');
  const parsedTenant = TenantIdSchema.safeParse(flags.tenant);
  if (!parsedTenant.success) throw new UsageError(`--tenant ${parsedTenant.error.issues[0]?.message ?? 'is not a tenant id'}`);
  const tenant = parsedTenant.data;
  if (flags.clear) {
    const clearing = environment.data ?? 'test';
    const cleared = await withStore(io, (store) => store.deleteTenantCredentials(tenant, clearing));
    writeLine(
      io.stdout,
      cleared
        ? `tenant ${tenant} (${clearing}): credentials forgotten; its payments are read, and its deliveries verified, with the partner's keys and secret`
        : `tenant ${tenant} (${clearing}) had no stored credentials`,
    );
    return;
  }
  // The key is checked before anything is read or opened: a missing key leaves nothing behind.
  const box = secretsBox(io);
  const text = flags.fromFile === undefined ? await readInput(io) : await readFile(resolve(io.cwd, flags.fromFile), 'utf8');
  let input: unknown;
  try {
    input = JSON.parse(text);
  } catch {
    throw new UsageError(`${flags.fromFile ?? 'standard input'} is not JSON: give ${TENANT_CREDENTIALS_SHAPE}`);
  }
  const saved = await withStore(io, (store) => saveTenantCredentials({ store, box }, tenant, input, { environment: environment.data }));
  writeLine(io.stdout, `tenant ${tenant} (${saved}): credentials stored, sealed with key ${box.sealingKeyId}`);
}

/** `checkout-kit merchants rekey`: re-seal every tenant's credentials with CHECKOUT_SECRETS_KEY's first key. */
export async function rekey(io: CliIO): Promise<void> {
  const box = secretsBox(io);
  const { resealed, current } = await withStore(io, (store) => rekeyTenantCredentials({ store, box }));
  writeLine(io.stdout, `re-sealed ${resealed} tenants' credentials with key ${box.sealingKeyId} (${current} already were)`);
}

import { z } from 'zod';
import { checkKey } from '../config/keys.js';
import { ConfigError, InvalidRequestError, registerSecret } from '../errors/index.js';
import type { Environment } from '../schemas/index.js';
import type { SealedTenantCredentials, Store } from '../store/index.js';
import { SecretsBox } from './secrets-box.js';

/**
 * A tenant's own credentials at the service, for a platform that stores them (the alternative to
 * reading every tenant's payments with the partner's keys): its merchant key and signing secret.
 */
export const TenantCredentialsSchema = z
  .object({
    apiKey: z.string().min(1),
    signingSecret: z.string().min(1),
  })
  .strict();
export type TenantCredentials = z.infer<typeof TenantCredentialsSchema>;

/** What the sealed value is bound to: one tenant's credentials never open as another's. */
const contextOf = (tenantId: string, environment: Environment) => `tenant ${tenantId} (${environment})`;

/**
 * Seal and store a tenant's credentials. The tenant must be onboarded in the key's environment;
 * the key must be a merchant key and the secret a merchant signing secret. Returns the environment.
 */
export async function saveTenantCredentials(deps: { store: Store; box: SecretsBox }, tenantId: string, input: unknown, now = new Date()): Promise<Environment> {
  const parsed = TenantCredentialsSchema.safeParse(input);
  if (!parsed.success) {
    throw new InvalidRequestError(
      `tenant credentials: give a JSON object with apiKey (svc_mk_…) and signingSecret (svc_ms_…), nothing else; nothing was stored.`,
    );
  }
  const credentials = parsed.data;
  for (const secret of Object.values(credentials)) registerSecret(secret);
  const environment = checkKey('merchant-key', credentials.apiKey, 'apiKey')!;
  checkKey('merchant-secret', credentials.signingSecret, 'signingSecret');
  const tenant = await deps.store.getTenantMerchant(tenantId, environment);
  if (tenant?.status !== 'created') {
    throw new ConfigError(
      `Tenant ${tenantId} is not onboarded in the ${environment} environment: run \`checkout-kit merchants onboard --tenant ${tenantId} …\` first; nothing was stored.`,
    );
  }
  const sealed = deps.box.seal(JSON.stringify(credentials), contextOf(tenantId, environment));
  await deps.store.putTenantCredentials({ tenantId, environment, sealed, keyId: deps.box.sealingKeyId }, now);
  return environment;
}

/** A tenant's credentials, opened; undefined when the platform stores none for it. */
export async function loadTenantCredentials(
  deps: { store: Store; box: SecretsBox },
  tenantId: string,
  environment: Environment,
): Promise<TenantCredentials | undefined> {
  const stored = await deps.store.getTenantCredentials(tenantId, environment);
  return stored && openTenantCredentials(deps.box, stored);
}

/** Open credentials as the store keeps them (their secrets registered for redaction). */
export function openTenantCredentials(box: SecretsBox, stored: SealedTenantCredentials): TenantCredentials {
  const credentials = TenantCredentialsSchema.parse(JSON.parse(box.open(stored.sealed, contextOf(stored.tenantId, stored.environment))));
  for (const secret of Object.values(credentials)) registerSecret(secret);
  return credentials;
}

/**
 * Re-seal with the box's first key every credential sealed with another (after a key rotation).
 * Each is replaced only if unchanged since it was read. Returns how many were re-sealed and how many
 * already were under the first key.
 */
export async function rekeyTenantCredentials(deps: { store: Store; box: SecretsBox }, now = new Date()): Promise<{ resealed: number; current: number }> {
  let resealed = 0;
  let current = 0;
  const page = 100;
  for (let offset = 0; ; offset += page) {
    const rows = await deps.store.listTenantCredentials({ limit: page, offset });
    for (const row of rows) {
      if (row.keyId === deps.box.sealingKeyId) {
        current += 1;
        continue;
      }
      const context = contextOf(row.tenantId, row.environment);
      const sealed = deps.box.seal(deps.box.open(row.sealed, context), context);
      if (await deps.store.resealTenantCredentials(row.tenantId, row.environment, row.sealed, { sealed, keyId: deps.box.sealingKeyId }, now)) resealed += 1;
    }
    if (rows.length < page) return { resealed, current };
  }
}

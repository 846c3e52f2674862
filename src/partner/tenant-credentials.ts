import { z } from 'zod';
import { checkKey } from '../config/keys.js';
import { ConfigError, InvalidRequestError, registerSecret } from '../errors/index.js';
import type { Environment } from '../schemas/index.js';
import type { SealedTenantCredentials, Store } from '../store/index.js';
import { SecretsBox } from './secrets-box.js';

/**
 * What a platform may store of one tenant's own credentials at the service, instead of using the
 * partner's for everything: its merchant key and signing secret (its payments are then read with
 * them), and the webhook secret the service signs its deliveries with (the receiver then verifies
 * them with it). Either or both.
 */
export const TenantCredentialsSchema = z
  .object({
    apiKey: z.string().min(1).optional(),
    signingSecret: z.string().min(1).optional(),
    webhookSecret: z.string().min(1).optional(),
  })
  .strict()
  .refine((c) => (c.apiKey === undefined) === (c.signingSecret === undefined), 'apiKey and signingSecret go together')
  .refine((c) => c.apiKey !== undefined || c.webhookSecret !== undefined, 'nothing to store');
export type TenantCredentials = z.infer<typeof TenantCredentialsSchema>;

export const TENANT_CREDENTIALS_SHAPE = '{"apiKey": "svc_mk_…", "signingSecret": "svc_ms_…"}, {"webhookSecret": "whsec_…"}, or all three';

/** What the sealed value is bound to: one tenant's credentials never open as another's. */
const contextOf = (tenantId: string, environment: Environment) => `tenant ${tenantId} (${environment})`;

/**
 * Seal and store a tenant's credentials, beside those already stored: the key pair and the webhook
 * secret each replace only their own. The tenant must be onboarded in their environment: the
 * merchant key's, or `environment` when only a webhook secret is given. Returns the environment.
 */
export async function saveTenantCredentials(
  deps: { store: Store; box: SecretsBox },
  tenantId: string,
  input: unknown,
  options: { environment?: Environment | undefined; now?: Date } = {},
): Promise<Environment> {
  const parsed = TenantCredentialsSchema.safeParse(input);
  if (!parsed.success) {
    throw new InvalidRequestError(`tenant credentials: give a JSON object ${TENANT_CREDENTIALS_SHAPE}, nothing else; nothing was stored.`);
  }
  const credentials = parsed.data;
  for (const secret of Object.values(credentials)) registerSecret(secret);
  let environment = options.environment;
  if (credentials.apiKey !== undefined) {
    const keyEnvironment = checkKey('merchant-key', credentials.apiKey, 'apiKey')!;
    // The schema has it whenever apiKey is there.
    checkKey('merchant-secret', credentials.signingSecret!, 'signingSecret');
    if (environment !== undefined && environment !== keyEnvironment) {
      throw new ConfigError(`apiKey is a ${keyEnvironment} key but the ${environment} environment was asked for; nothing was stored.`);
    }
    environment = keyEnvironment;
  }
  if (environment === undefined) {
    throw new ConfigError('A webhook secret alone does not say its environment: give --environment test or live; nothing was stored.');
  }
  const tenant = await deps.store.getTenantMerchant(tenantId, environment);
  if (tenant?.status !== 'created') {
    throw new ConfigError(
      `Tenant ${tenantId} is not onboarded in the ${environment} environment: run \`checkout-kit merchants onboard --tenant ${tenantId} …\` first; nothing was stored.`,
    );
  }
  const context = contextOf(tenantId, environment);
  const now = options.now ?? new Date();
  // What is given replaces its own fields; the rest stays (a webhook secret stored after the key pair keeps the pair).
  for (;;) {
    const stored = await deps.store.getTenantCredentials(tenantId, environment);
    const merged = stored ? { ...openTenantCredentials(deps.box, stored), ...credentials } : credentials;
    const sealed = deps.box.seal(JSON.stringify(merged), context);
    // Stored only if none are, replaced only if unchanged since read: another save in between is merged again, not lost.
    const written = stored
      ? await deps.store.resealTenantCredentials(tenantId, environment, stored.sealed, { sealed, keyId: deps.box.sealingKeyId }, now)
      : await deps.store.putTenantCredentials({ tenantId, environment, sealed, keyId: deps.box.sealingKeyId }, now);
    if (written) return environment;
  }
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

import { z } from 'zod';
import { isDefiniteRefusal, standingTry } from '../checkout/create-once.js';
import { requestHash, tenantMerchantKey } from '../domain/idempotency.js';
import type { PartnerClient } from '../client/index.js';
import { parseInput } from '../client/inputs.js';
import { CheckoutError, ConfigError, InvalidRequestError, isOffSpec } from '../errors/index.js';
import { silentLogger, type Logger } from '../log/index.js';
import { TenantIdSchema } from '../schemas/common.js';
import type { Store, TenantMerchant } from '../store/index.js';

/** A tenant to onboard: the platform's own id of it, and the merchant's name and e-mail at the service. */
export const OnboardInputSchema = z.strictObject({
  tenantId: TenantIdSchema,
  name: z.string().trim().min(1).max(200),
  email: z.email(),
});
/** A tenant to onboard: the platform's tenant id and the merchant's name and email. */
export type OnboardInput = z.input<typeof OnboardInputSchema>;

/** What `onboardMerchant` works with: the store that keeps one merchant per tenant, and the partner client. */
export interface OnboardDeps {
  store: Store;
  /** The partner's client: its key's environment is the merchant's. */
  partner: PartnerClient;
  logger?: Logger | undefined;
  /** @default () => new Date() */
  clock?: (() => Date) | undefined;
  signal?: AbortSignal | undefined;
}

/** The tenant's merchant, created now or found from an earlier onboarding. */
export interface OnboardResult {
  tenant: TenantMerchant & { status: 'created'; merchantId: string };
  /** False when the tenant's merchant was already recorded; true when this call asked the service for it (a replay of a crashed try's key included). */
  created: boolean;
}

const created = (tenant: TenantMerchant): tenant is OnboardResult['tenant'] => tenant.status === 'created' && tenant.merchantId !== undefined;

/**
 * Create the service merchant of a partner's tenant (spec 4.2, `externalTenantId` = the tenant id)
 * exactly once per tenant and environment. The Idempotency-Key is derived from the tenant id and
 * recorded in the store before the call, so a retry after a crash, a second run or a concurrent one
 * gets the same merchant back instead of a second one.
 */
export async function onboardMerchant(deps: OnboardDeps, input: OnboardInput): Promise<OnboardResult> {
  const { tenantId, name, email } = parseInput(OnboardInputSchema, input, 'onboarding');
  const environment = deps.partner.environment;
  if (!environment) throw new ConfigError('The partner key names no environment (svc_pk_test_… or svc_pk_live_…): onboarding needs one.');
  const clock = deps.clock ?? (() => new Date());
  const logger = deps.logger ?? silentLogger;
  const body = { externalTenantId: tenantId, name, email };
  const hash = requestHash(body);

  const { stored } = await standingTry(
    () => deps.store.getTenantMerchant(tenantId, environment),
    async (number) => {
      const put = await deps.store.putTenantMerchant(
        { tenantId, environment, name, email, requestHash: hash, number, idempotencyKey: tenantMerchantKey(tenantId, number) },
        clock(),
      );
      return { inserted: put.inserted, stored: put.tenant };
    },
  );
  if (stored.requestHash !== hash) {
    throw new InvalidRequestError(
      `Tenant ${tenantId} is already onboarded${stored.merchantId ? ` (merchant ${stored.merchantId})` : ''} with another name or e-mail (${stored.name}, ${stored.email}): the service's merchant is not changed by onboarding again.`,
    );
  }
  if (created(stored)) return { tenant: stored, created: false };

  let merchant;
  try {
    merchant = await deps.partner.merchants.create(body, { idempotencyKey: stored.idempotencyKey, signal: deps.signal });
  } catch (error) {
    if (isDefiniteRefusal(error)) {
      // Nothing was created: free the tenant for a corrected try, under a new key.
      await deps.store.releaseTenantMerchant(tenantId, environment, stored.number, clock());
      logger.info({ tenantId, environment, attempt: stored.number, err: error }, `the service refused the merchant of tenant ${tenantId}`);
    } else if (isOffSpec(error)) {
      logger.warn(
        { tenantId, environment, attempt: stored.number, err: error },
        `the service answered the merchant of tenant ${tenantId} off its spec; the try stands under its key`,
      );
    }
    throw error;
  }
  // Another tenant's merchant would take this tenant's payments: not recorded, the try stands under its key.
  if (merchant.externalTenantId != null && merchant.externalTenantId !== tenantId) {
    logger.error(
      { tenantId, environment, merchantId: merchant.merchantId, externalTenantId: merchant.externalTenantId },
      `the service answered the merchant of tenant ${tenantId} with another tenant's merchant: not recorded`,
    );
    throw new CheckoutError(
      `The payment service answered the onboarding of tenant ${tenantId} with another tenant's merchant (its externalTenantId differs); nothing was recorded. Check the service before onboarding again.`,
      { code: 'invalid_response' },
    );
  }
  // A merchant already bound to another tenant would take this tenant's payments as that tenant's.
  const boundElsewhere = async () => {
    const holder = await deps.store.findTenantByMerchantId(merchant.merchantId);
    return holder !== undefined && (holder.tenantId !== tenantId || holder.environment !== environment) ? holder : undefined;
  };
  const holder = await boundElsewhere();
  if (holder) throw merchantOfAnother(tenantId, environment, merchant.merchantId, holder, logger);
  let tenant: TenantMerchant;
  try {
    tenant = await deps.store.completeTenantMerchant(tenantId, environment, merchant, clock());
  } catch (error) {
    // Another onboarding recorded the same merchant at the same moment: the store keeps one tenant per merchant.
    const raced = await boundElsewhere().catch(() => undefined);
    throw raced ? merchantOfAnother(tenantId, environment, merchant.merchantId, raced, logger) : error;
  }
  if (!created(tenant)) throw new Error(`tenant ${tenantId} was completed without its merchant id`);
  logger.info({ tenantId, environment, merchantId: tenant.merchantId }, `tenant ${tenantId} onboarded as merchant ${tenant.merchantId}`);
  return { tenant, created: true };
}

/** The service answered a tenant's onboarding with the merchant another tenant is onboarded as: nothing recorded, the try stands under its key. */
function merchantOfAnother(
  tenantId: string,
  environment: TenantMerchant['environment'],
  merchantId: string,
  holder: TenantMerchant,
  logger: Logger,
): CheckoutError {
  logger.error(
    { tenantId, environment, merchantId, heldBy: holder.tenantId, heldIn: holder.environment },
    `the service answered the merchant of tenant ${tenantId} with tenant ${holder.tenantId}'s merchant: not recorded`,
  );
  return new CheckoutError(
    `The payment service answered the onboarding of tenant ${tenantId} with merchant ${merchantId}, which tenant ${holder.tenantId} (${holder.environment}) is already onboarded as; nothing was recorded. Check the service before onboarding again.`,
    { code: 'invalid_response' },
  );
}

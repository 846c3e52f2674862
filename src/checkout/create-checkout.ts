import type { CheckoutClient, PartnerClient } from '../client/index.js';
import {
  ApiError,
  CheckoutError,
  InvalidRequestError,
  InvalidResponseError,
  isAbortedBy,
  isOffSpec,
  NetworkError,
  offSpecElsewhere,
  offSpecRefusal,
  refusesRequest,
  TimeoutError,
} from '../errors/index.js';
import { silentLogger, type Logger } from '../log/index.js';
import { TENANT_ID_RULE, tenantOrderKey } from '../domain/index.js';
import { assertAmount, compareAmounts } from '../money/index.js';
import type { Invoice, Payment } from '../schemas/index.js';
import { sameUuid, TenantIdSchema } from '../schemas/common.js';
import type { CheckoutAttempt, ResourceKind, Store } from '../store/index.js';
import { isDefiniteRefusal, standingTry } from './create-once.js';
import { orderIdempotencyKey, requestHash } from '../domain/idempotency.js';
import { checkRedirectUrl, redirectGuardFor, type RedirectGuardOptions } from './redirect-guard.js';

/**
 * Who creates the payment: the merchant itself, or a partner on behalf of a merchant: one fixed
 * `merchantId`, or (without it) the merchant of each checkout's `tenantId` (see `onboardMerchant`).
 */
export type Creator = { client: CheckoutClient } | { partner: PartnerClient; merchantId?: string | undefined };

/** The environment of a creator's keys (undefined when its client has none, e.g. built without keys). */
export const creatorEnvironment = (creator: Creator) => ('partner' in creator ? creator.partner.environment : creator.client.environment);

/** What `createCheckout` works with: the store that keeps one attempt per order, and who creates the resource. */
export interface CheckoutDeps {
  store: Store;
  creator: Creator;
  /**
   * When given, the `checkoutUrl` is checked before it is stored: a URL off the allow-list is never
   * kept (nor shown later on the return page). `RedirectRejectedError` is thrown.
   */
  redirect?: RedirectGuardOptions;
  logger?: Logger;
  /** The clock of what the store records; give the engine's (`engine.clock`). @default () => new Date() */
  clock?: () => Date;
  /**
   * Give up the service call when this aborts (the server closing, or a deadline: an
   * `AbortSignal.timeout`): a checkout waiting out the service's `Retry-After` then answers 503 at
   * once, and the buyer's retry gets the same payment.
   */
  signal?: AbortSignal;
}

/** The order to take payment for: its id (one payment per order, ever), amount and buyer. */
export interface CheckoutInput {
  /** The shop's own order id: one payment per order id, ever (per tenant, on a partner platform). */
  orderId: string;
  /** A partner platform's tenant the order is for: its onboarded merchant gets the payment. */
  tenantId?: string | undefined;
  amount: string;
  email?: string | undefined;
  token?: string | undefined;
  networkId?: number | undefined;
  /** @default orderId */
  referenceId?: string | undefined;
  successUrl?: string | undefined;
  cancelUrl?: string | undefined;
}

/** The resource created (or found) for the order, and where to send the buyer. */
export interface CheckoutResult {
  kind: ResourceKind;
  orderId: string;
  resourceId: string;
  checkoutUrl: string;
  idempotencyKey: string;
  /** True when the order's payment already existed (double click, retry, second server). */
  reused: boolean;
}

/** A NUL or a lone UTF-16 surrogate: the store keeps each as U+FFFD, so two such order ids would be one order. */
const NOT_STORABLE = /[\u0000\p{Cs}]/u;

function checkOrderId(orderId: unknown): asserts orderId is string {
  if (typeof orderId !== 'string' || orderId.trim() === '' || orderId.length > 200 || NOT_STORABLE.test(orderId)) {
    throw new CheckoutError('orderId must be a non-empty string of at most 200 characters, without NUL or a lone surrogate.', { code: 'invalid_request' });
  }
}

/** Translate what the service or the client said into an error the shop can show. */
function toCheckoutError(error: unknown, orderId: string): unknown {
  if (error instanceof CheckoutError) return error;
  if (error instanceof InvalidRequestError) return new CheckoutError(error.message, { code: 'invalid_request', cause: error });
  if (error instanceof NetworkError || error instanceof TimeoutError) {
    return new CheckoutError(`The payment service could not be reached for order ${orderId}; try again in a moment.`, {
      code: 'service_unreachable',
      cause: error,
    });
  }
  if (error instanceof InvalidResponseError) {
    return new CheckoutError(`${error.summary}; nothing was redirected. Try again later.`, { code: 'invalid_response', cause: error });
  }
  // A 400 or 422 blames the buyer's input only with the spec's error object.
  const offSpec = offSpecRefusal(error);
  if (offSpec) return new CheckoutError(`${offSpec}; nothing was redirected. Try again later.`, { code: 'invalid_response', cause: error });
  if (error instanceof ApiError) {
    if (error.code === 'idempotency_key_reused') return reusedError(orderId, error);
    if (error.code === 'token_not_available' || error.code === 'network_not_available') {
      const what = error.code === 'token_not_available' ? 'That token' : 'That network';
      return new CheckoutError(`${what} is not available for this shop: ${error.serviceMessage}`, { code: error.code, cause: error });
    }
    if (refusesRequest(error)) return new CheckoutError(error.serviceMessage, { code: 'invalid_request', cause: error });
    if (error.status === 409)
      return new CheckoutError(`The payment for order ${orderId} is still being created; try again in a moment.`, {
        code: 'checkout_in_progress',
        cause: error,
      });
    if (error.status >= 500 || error.status === 429)
      return new CheckoutError(`The payment service is unavailable (${error.status}); try again in a moment.`, { code: 'service_unreachable', cause: error });
    const elsewhere = offSpecElsewhere(error);
    if (elsewhere) return new CheckoutError(elsewhere, { code: 'service_rejected', cause: error });
    // 401, 403, 404 and the rest: the shop's configuration, not the buyer, is at fault.
    return new CheckoutError(`The payment service refused the request (${error.status} ${error.code}); check the shop's keys with \`checkout-kit doctor\`.`, {
      code: 'service_rejected',
      cause: error,
    });
  }
  return error;
}

/** The checkout given up as `signal` asked: its deadline passed (an `AbortSignal.timeout`), or the server is closing. */
function gaveUp(orderId: string, cause: unknown, signal: AbortSignal): CheckoutError {
  if ((signal.reason as Error | undefined)?.name === 'TimeoutError') {
    return new CheckoutError(`The payment service did not answer in time for order ${orderId}; try again in a moment (the order keeps its one payment).`, {
      code: 'service_unreachable',
      cause,
    });
  }
  return new CheckoutError(`The shop is restarting; try order ${orderId} again in a moment.`, { code: 'service_unreachable', cause });
}

function reusedError(orderId: string, cause?: unknown): CheckoutError {
  return new CheckoutError(
    `Order ${orderId} already has a payment created with different details (amount, email, token or network). Use a new order id for a changed order.`,
    { code: 'idempotency_key_reused', cause },
  );
}

/**
 * Create the payment (or invoice) for an order exactly once. The Idempotency-Key is derived from
 * the order id and recorded in the store before the request, so a retry after a crash, a double
 * click or a second server returns the same payment and `checkoutUrl` instead of a new one.
 */
export async function createCheckout(deps: CheckoutDeps, input: CheckoutInput, kind: ResourceKind = 'payment'): Promise<CheckoutResult> {
  checkOrderId(input.orderId);
  // A tenant's order is kept under its tenant (`tenant/order`) and created for its merchant.
  const { orderKey: orderId, creator } = await creatorFor(deps, input);
  try {
    assertAmount(input.amount);
  } catch (error) {
    throw toCheckoutError(error, orderId);
  }
  const logger = deps.logger ?? silentLogger;
  const clock = deps.clock ?? (() => new Date());
  // Arrived as the server closes: nothing recorded, nothing sent.
  if (deps.signal?.aborted) throw gaveUp(orderId, deps.signal.reason, deps.signal);
  const body = requestBody(input, kind);
  const hash = requestHash({ ...body, kind });
  const { attempt, inserted } = await recordAttempt(deps.store, { orderId, kind, requestHash: hash }, clock);
  const { idempotencyKey } = attempt;
  if (attempt.requestHash !== hash || attempt.kind !== kind) throw reusedError(orderId);
  if (attempt.status === 'created' && attempt.resourceId && attempt.checkoutUrl) {
    // An earlier call may have died between recording the attempt and the resource: the reconciler
    // must know every payment a buyer can be sent to.
    if (!(await deps.store.getResource(kind, attempt.resourceId))) {
      await deps.store.updateResource({ kind, id: attempt.resourceId, orderId, source: 'checkout' }, clock());
    }
    return { kind, orderId, resourceId: attempt.resourceId, checkoutUrl: attempt.checkoutUrl, idempotencyKey, reused: true };
  }

  let resource: Payment | Invoice;
  try {
    resource = await send(creator, kind, body, { idempotencyKey, signal: deps.signal });
  } catch (error) {
    // The attempt stays recorded under its key: the buyer's retry after the restart creates (or
    // gets back) the same payment.
    if (isAbortedBy(error, deps.signal)) throw gaveUp(orderId, error, deps.signal!);
    if (isDefiniteRefusal(error)) {
      // Nothing was created: free the order for a corrected try, under a new key.
      await deps.store.releaseCheckoutAttempt(orderId, attempt.number, clock());
      logger.info({ orderId, kind, attempt: attempt.number, err: error }, `the service refused the ${kind} for order ${orderId}; a corrected retry may follow`);
    } else if (isOffSpec(error)) {
      logger.warn(
        { orderId, kind, attempt: attempt.number, err: error },
        `the service answered the ${kind} for order ${orderId} off its spec; the attempt stands under its key`,
      );
    }
    throw toCheckoutError(error, orderId);
  }
  const differs = fieldsNotAsAsked(body, resource, 'partner' in creator ? creator.merchantId : undefined);
  if (differs.length > 0) {
    // Not the order's payment: nothing is recorded for it and the buyer is not sent to it. The
    // attempt stays under its key, so a retry gets the same answer until the service is fixed.
    logger.error(
      { orderId, kind, id: resource.id, fields: differs },
      `the service created the ${kind} for order ${orderId} with a different ${differs.join(' and ')}: not redirected`,
    );
    throw new CheckoutError(
      `The payment service created ${kind} ${resource.id} for order ${orderId} with a different ${differs.join(' and ')} from the one asked for; nothing was redirected. Check the service before retrying.`,
      { code: 'invalid_response' },
    );
  }
  // Known to the reconciler first, whatever happens next.
  await deps.store.updateResource(
    {
      kind,
      id: resource.id,
      orderId,
      environment: resource.environment,
      source: 'checkout',
      snapshot: resource,
      expiresAt: resource.expiresAt ?? undefined,
    },
    clock(),
  );
  if (!resource.checkoutUrl) throw new CheckoutError(`The service created ${kind} ${resource.id} without a checkoutUrl.`, { code: 'invalid_response' });
  if (deps.redirect) checkRedirectUrl(resource.checkoutUrl, redirectGuardFor(deps.redirect, creatorEnvironment(deps.creator)));
  await deps.store.completeCheckoutAttempt(orderId, { resourceId: resource.id, checkoutUrl: resource.checkoutUrl }, clock());
  logger.info({ orderId, kind, id: resource.id }, `checkout ${kind} ready`);
  // An earlier attempt may have reached the service before a crash: then this call was its replay.
  return { kind, orderId, resourceId: resource.id, checkoutUrl: resource.checkoutUrl, idempotencyKey, reused: !inserted };
}

/** The order's standing attempt: the one stored, or a new one (see `standingTry`). */
async function recordAttempt(
  store: Store,
  attempt: Pick<CheckoutAttempt, 'orderId' | 'kind' | 'requestHash'>,
  clock: () => Date,
): Promise<{ inserted: boolean; attempt: CheckoutAttempt }> {
  const { inserted, stored } = await standingTry(
    () => store.getCheckoutAttempt(attempt.orderId),
    async (number) => {
      const put = await store.putCheckoutAttempt({ ...attempt, number, idempotencyKey: orderIdempotencyKey(attempt.kind, attempt.orderId, number) }, clock());
      return { inserted: put.inserted, stored: put.attempt };
    },
  );
  return { inserted, attempt: stored };
}

function requestBody(input: CheckoutInput, kind: ResourceKind): Record<string, unknown> {
  const optional = (value: unknown) => (value === undefined || value === '' ? undefined : value);
  const body: Record<string, unknown> = {
    amount: input.amount,
    token: optional(input.token),
    networkId: optional(input.networkId),
    referenceId: optional(input.referenceId) ?? input.orderId,
  };
  if (kind === 'payment') {
    body.email = optional(input.email);
    body.successUrl = optional(input.successUrl);
    body.cancelUrl = optional(input.cancelUrl);
  }
  return Object.fromEntries(Object.entries(body).filter(([, value]) => value !== undefined));
}

/** The order's key in the store and who creates its payment: for a tenant, its onboarded merchant. */
async function creatorFor(deps: CheckoutDeps, input: CheckoutInput): Promise<{ orderKey: string; creator: Creator }> {
  const { creator } = deps;
  const fixedMerchant = !('partner' in creator) || creator.merchantId !== undefined;
  if (input.tenantId === undefined) {
    if (!fixedMerchant)
      throw new CheckoutError("tenantId is missing: this partner platform creates each payment for the merchant of the order's tenant.", {
        code: 'invalid_request',
      });
    return { orderKey: input.orderId, creator };
  }
  if (fixedMerchant)
    throw new CheckoutError("tenantId is for a partner platform's checkout (a partner creator without a fixed merchantId).", { code: 'invalid_request' });
  const tenantId = TenantIdSchema.safeParse(input.tenantId);
  if (!tenantId.success) throw new CheckoutError(`tenantId ${TENANT_ID_RULE}.`, { code: 'invalid_request' });
  const environment = creator.partner.environment;
  const tenant = environment === undefined ? undefined : await deps.store.getTenantMerchant(tenantId.data, environment);
  if (tenant?.status !== 'created' || tenant.merchantId === undefined) {
    throw new CheckoutError(`No onboarded tenant ${tenantId.data}: onboard it first (\`checkout-kit merchants onboard --tenant …\`).`, { code: 'not_found' });
  }
  return { orderKey: tenantOrderKey(tenantId.data, input.orderId), creator: { partner: creator.partner, merchantId: tenant.merchantId } };
}

/**
 * The fields of the answer that say another payment than the one asked for: its amount, its
 * reference, or (a partner's payment) its merchant.
 */
function fieldsNotAsAsked(body: Record<string, unknown>, resource: Payment | Invoice, merchantId: string | undefined): string[] {
  const differs: string[] = [];
  if (compareAmounts(resource.amount, body.amount as string) !== 0) differs.push('amount');
  // A service that does not echo the reference says nothing wrong; one that echoes another does.
  if (resource.referenceId != null && resource.referenceId !== body.referenceId) differs.push('referenceId');
  // Another merchant's payment would take the buyer's money to that merchant.
  const answered = (resource as { merchantId?: unknown }).merchantId;
  if (merchantId !== undefined && !(typeof answered === 'string' && sameUuid(answered, merchantId))) differs.push('merchantId');
  return differs;
}

async function send(
  creator: Creator,
  kind: ResourceKind,
  body: Record<string, unknown>,
  call: { idempotencyKey: string; signal: AbortSignal | undefined },
): Promise<Payment | Invoice> {
  const options = { idempotencyKey: call.idempotencyKey, ...(call.signal ? { signal: call.signal } : {}) };
  if ('partner' in creator) {
    if (kind === 'invoice') throw new CheckoutError('Partners create payments, not invoices: use a merchant client for invoices.', { code: 'invalid_request' });
    if (creator.merchantId === undefined) throw new Error('a partner creator without a merchant reached send');
    return creator.partner.payments.create({ ...(body as { amount: string }), merchantId: creator.merchantId }, options);
  }
  return kind === 'payment'
    ? creator.client.payments.create(body as { amount: string }, options)
    : creator.client.invoices.create(body as { amount: string }, options);
}

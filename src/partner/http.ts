import { DEFAULT_CHECKOUT_TIMEOUT_MS, errorAnswer, json, type HttpAnswer } from '../checkout/http.js';
import { isRetryable } from '../client/retry-policy.js';
import {
  ApiError,
  CheckoutError,
  InvalidRequestError,
  InvalidResponseError,
  isAbortedBy,
  offSpecElsewhere,
  offSpecRefusal,
  refusesRequest,
} from '../errors/index.js';
import { deadline } from '../timers/index.js';
import { silentLogger } from '../log/index.js';
import { onboardMerchant, type OnboardDeps, type OnboardInput } from './onboard-merchant.js';

/**
 * What went wrong, as a `CheckoutError` for the platform's admin: the service's faults are 502/503,
 * never a 500, and no message carries the service's URL or the request's Idempotency-Key.
 */
function toOnboardError(error: unknown): unknown {
  if (error instanceof InvalidRequestError) return new CheckoutError(error.message, { code: 'invalid_request', cause: error });
  if (error instanceof InvalidResponseError)
    return new CheckoutError(`${error.summary}; try the onboarding again later.`, { code: 'invalid_response', cause: error });
  // A 400 or 422 blames the merchant's fields only with the spec's error object.
  const offSpec = offSpecRefusal(error);
  if (offSpec) return new CheckoutError(`${offSpec}; try the onboarding again later.`, { code: 'invalid_response', cause: error });
  if (isRetryable(error)) {
    // Whether the service created the merchant is unknown: the same call later gets that one back.
    return new CheckoutError('The payment service could not be reached or is unavailable; onboard the tenant again in a moment (it is created once).', {
      code: 'service_unreachable',
      cause: error,
    });
  }
  if (error instanceof ApiError) {
    if (refusesRequest(error)) {
      return new CheckoutError(`The payment service refused the merchant: ${error.serviceMessage}`, { code: 'invalid_request', cause: error });
    }
    const elsewhere = offSpecElsewhere(error);
    if (elsewhere) return new CheckoutError(elsewhere, { code: 'service_rejected', cause: error });
    return new CheckoutError(
      `The payment service refused the request (${error.status} ${error.code}); check the partner's keys with \`checkout-kit doctor\`.`,
      {
        code: 'service_rejected',
        cause: error,
      },
    );
  }
  return error;
}

/** `POST /tenants` `{ tenantId, name, email }`: the tenant's merchant, 201 when created now, 200 when it already was. */
export async function handleOnboardRequest(options: OnboardDeps & { timeoutMs?: number | undefined }, body: unknown): Promise<HttpAnswer> {
  // The caller's signal (a server closing) may live as long as the server: the deadline's listener comes off it once answered.
  const { signal, release } = deadline(options.timeoutMs ?? DEFAULT_CHECKOUT_TIMEOUT_MS, options.signal);
  try {
    const { tenant, created } = await onboardMerchant({ ...options, signal }, (body ?? {}) as OnboardInput);
    return json(created ? 201 : 200, { tenantId: tenant.tenantId, merchantId: tenant.merchantId, environment: tenant.environment });
  } catch (error) {
    const tenantId = (body as { tenantId?: unknown } | undefined)?.tenantId;
    const answered = isAbortedBy(error, signal)
      ? new CheckoutError('The payment service did not answer in time; onboard the tenant again in a moment (it is created once).', {
          code: 'service_unreachable',
          cause: error,
        })
      : toOnboardError(error);
    return errorAnswer(answered, options.logger ?? silentLogger, 'onboarding', { tenantId });
  } finally {
    release();
  }
}

import type { HttpAnswer } from '../checkout/http.js';
import { ApiError, CHECKOUT_ERROR_STATUS, InvalidRequestError, InvalidResponseError, NetworkError, TimeoutError } from '../errors/index.js';
import { silentLogger, type Logger } from '../log/index.js';
import { errorObject } from '../schemas/index.js';
import { onboardMerchant, type OnboardDeps, type OnboardInput } from './onboard-merchant.js';

const json = (status: number, body: unknown): HttpAnswer => ({ status, headers: { 'content-type': 'application/json; charset=utf-8' }, body });
const failed = (code: keyof typeof CHECKOUT_ERROR_STATUS, message: string) => json(CHECKOUT_ERROR_STATUS[code], errorObject(code, message));

/**
 * What went wrong, as the spec's error object for the platform's admin: the service's faults are
 * 502/503, never a 500, and no message carries the service's URL or the request's Idempotency-Key.
 */
function onboardErrorAnswer(error: unknown, tenantId: unknown, logger: Logger): HttpAnswer {
  if (error instanceof InvalidRequestError) return failed('invalid_request', error.message);
  if (error instanceof InvalidResponseError) return failed('invalid_response', `${error.summary}; try the onboarding again later.`);
  const retryable = error instanceof ApiError && (error.status >= 500 || error.status === 409 || error.status === 429);
  if (error instanceof NetworkError || error instanceof TimeoutError || retryable) {
    // Whether the service created the merchant is unknown: the same call later gets that one back.
    return failed(
      'service_unreachable',
      'The payment service could not be reached or is unavailable; onboard the tenant again in a moment (it is created once).',
    );
  }
  if (error instanceof ApiError) {
    if (error.status === 400 || error.status === 422) return failed('invalid_request', `The payment service refused the merchant: ${error.serviceMessage}`);
    return failed(
      'service_rejected',
      `The payment service refused the request (${error.status} ${error.code}); check the partner's keys with \`checkout-kit doctor\`.`,
    );
  }
  logger.error({ err: error, tenantId }, 'onboarding failed unexpectedly');
  return json(500, errorObject('internal_error', 'The onboarding failed unexpectedly; the error was logged.'));
}

/** `POST /tenants` `{ tenantId, name, email }`: the tenant's merchant, 201 when created now, 200 when it already was. */
export async function handleOnboardRequest(deps: OnboardDeps, body: unknown): Promise<HttpAnswer> {
  try {
    const { tenant, created } = await onboardMerchant(deps, (body ?? {}) as OnboardInput);
    return json(created ? 201 : 200, { tenantId: tenant.tenantId, merchantId: tenant.merchantId, environment: tenant.environment });
  } catch (error) {
    return onboardErrorAnswer(error, (body as { tenantId?: unknown } | undefined)?.tenantId, deps.logger ?? silentLogger);
  }
}

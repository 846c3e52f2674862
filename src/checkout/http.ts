import { z } from 'zod';
import { CheckoutError, RedirectRejectedError, StoreError } from '../errors/index.js';
import type { FulfillmentEngine } from '../fulfillment/index.js';
import { silentLogger, type Logger } from '../log/index.js';
import { tenantOrderKey } from '../domain/index.js';
import { TenantIdSchema } from '../schemas/common.js';
import { errorObject } from '../schemas/index.js';
import type { Store } from '../store/index.js';
import { deadline } from '../timers/index.js';
import { confirmReturn, type OrderStatus } from './confirm-return.js';
import { createCheckout, creatorEnvironment, type Creator } from './create-checkout.js';
import { checkRedirectUrl, redirectGuardFor, type RedirectGuardOptions } from './redirect-guard.js';

/** A framework-free HTTP answer; adapters copy it onto their response. */
export interface HttpAnswer {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

/** What the framework-free checkout handlers need: the store, the creator and the shop's URLs. */
export interface CheckoutHttpOptions {
  store: Store;
  creator: Creator;
  engine: FulfillmentEngine;
  redirect: RedirectGuardOptions;
  /** The shop's public base URL, for the success and cancel links (`returnPath` is under its path). @example 'https://shop.example' */
  publicUrl: string;
  /** Path of the return page. @default '/checkout/return' */
  returnPath?: string;
  logger?: Logger;
  /**
   * Aborted when the server closes: a checkout or return waiting on the service gives up (a
   * checkout answers 503, a return the stored state, unconfirmed) instead of holding the close.
   */
  signal?: AbortSignal;
  /**
   * How long `POST /checkout` waits for the service, retries and `Retry-After` included, before it
   * answers 503 `service_unreachable` (the buyer's retry gets the same payment), and the return page
   * for its confirm read before it answers the stored state (`confirmed: false`): under the 60 s a
   * proxy in front commonly gives a request. @default 20000
   */
  checkoutTimeoutMs?: number;
}

/** The default of `CheckoutHttpOptions.checkoutTimeoutMs`. */
export const DEFAULT_CHECKOUT_TIMEOUT_MS = 20_000;

/** `POST /checkout` fields, from JSON or an HTML form (strings). */
const CheckoutRequestSchema = z.object({
  orderId: z.string({ error: 'required, as text' }).min(1, 'must not be empty').max(200, 'at most 200 characters'),
  /** A partner platform's tenant (see `Creator`). */
  tenantId: TenantIdSchema.optional(),
  amount: z.string({ error: 'required, as a decimal string such as "10.00"' }).min(1, 'must not be empty'),
  email: z.string({ error: 'must be text' }).optional(),
  token: z.string({ error: 'must be text' }).optional(),
  networkId: z
    .union(
      [
        z.number().int(),
        z
          .string()
          .regex(/^[0-9]+$/)
          .transform(Number),
        z.literal('').transform(() => undefined),
      ],
      { error: 'must be a whole number, such as 56' },
    )
    .optional(),
});

/** A JSON answer. */
export const json = (status: number, body: unknown): HttpAnswer => ({ status, headers: { 'content-type': 'application/json; charset=utf-8' }, body });

/**
 * The store refusing the work for a while (busy, disk full, server unreachable: a `StoreError` with a
 * `reason`) as 503 `store_unavailable` with `Retry-After`, as the receiver answers it; undefined for
 * anything else. Only a failure that passes: a damaged file or a table dropped by hand is no reason to come back.
 */
export function storeUnavailableAnswer(error: unknown, what: string): HttpAnswer | undefined {
  if (!(error instanceof StoreError) || error.reason === undefined) return undefined;
  const answer = json(
    503,
    errorObject('store_unavailable', `The ${what} could not be completed just now (the shop's store is unavailable); try again in a moment.`),
  );
  return { ...answer, headers: { ...answer.headers, 'retry-after': '5' } };
}

/**
 * A `CheckoutError` as its status and the spec's error object; the store refusing the work for a
 * while 503 (`storeUnavailableAnswer`); anything else logged (with `context`) and answered 500.
 */
export function errorAnswer(error: unknown, logger: Logger, what = 'checkout', context: Record<string, unknown> = {}): HttpAnswer {
  if (error instanceof CheckoutError) return json(error.status, errorObject(error.code, error.message));
  const unavailable = storeUnavailableAnswer(error, what);
  if (unavailable) {
    // What was recorded before stands, and the order's key with it: a retry gets the same payment.
    logger.error({ err: error, ...context }, `${what}: the store failed`);
    return unavailable;
  }
  logger.error({ err: error, ...context }, `${what} failed unexpectedly`);
  return json(500, errorObject('internal_error', `The ${what} failed unexpectedly; the error was logged.`));
}

/** `POST /checkout`: create (or reuse) the order's payment and answer 303 to its checked `checkoutUrl`. */
export async function handleCheckoutRequest(options: CheckoutHttpOptions, body: unknown): Promise<HttpAnswer> {
  const logger = options.logger ?? silentLogger;
  const parsed = CheckoutRequestSchema.safeParse(body ?? {});
  if (!parsed.success) {
    const fields = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ');
    return json(400, errorObject('invalid_request', `Invalid checkout request (${fields}).`));
  }
  const { orderId: shopOrderId, tenantId } = parsed.data;
  // The return page finds the order under the key it is stored by: a tenant's order is its tenant's.
  const orderId = tenantId === undefined ? shopOrderId : tenantOrderKey(tenantId, shopOrderId);
  // Under the public URL's own path: a shop served at https://example.com/shop gets its buyers back there.
  const returnUrl = new URL((options.returnPath ?? '/checkout/return').replace(/^\/+/, ''), shopUrl(options.publicUrl));
  returnUrl.searchParams.set('orderId', orderId);
  const cancelUrl = new URL(returnUrl);
  cancelUrl.searchParams.set('cancelled', '1');
  // The server's signal lives as long as the server: the deadline's listener comes off it once answered.
  const { signal, release } = deadline(options.checkoutTimeoutMs ?? DEFAULT_CHECKOUT_TIMEOUT_MS, options.signal);
  try {
    const redirect = redirectGuardFor(options.redirect, creatorEnvironment(options.creator));
    const result = await createCheckout(
      { store: options.store, creator: options.creator, redirect, logger, clock: options.engine.clock, signal },
      { ...parsed.data, successUrl: returnUrl.href, cancelUrl: cancelUrl.href },
    );
    const target = checkRedirectUrl(result.checkoutUrl, redirect);
    return { status: 303, headers: { location: target.href, 'cache-control': 'no-store' }, body: { ...result, checkoutUrl: target.href } };
  } catch (error) {
    if (error instanceof RedirectRejectedError) {
      logger.error({ orderId, url: error.url.slice(0, 200) }, error.message);
      return json(
        502,
        errorObject('bad_checkout_url', 'The payment service answered with a checkout address this shop does not trust; nothing was redirected.'),
      );
    }
    return errorAnswer(error, logger);
  } finally {
    release();
  }
}

/**
 * `GET /checkout/return?orderId=…`: confirm and report the order's state, as JSON or a small page
 * that links back to the shop (`publicUrl`, else the site's root). With `creator`, the link back to
 * the payment page passes the guard `handleCheckoutRequest` sent the buyer there with.
 */
export async function handleReturnRequest(
  options: Pick<CheckoutHttpOptions, 'store' | 'engine' | 'logger' | 'redirect' | 'signal'> &
    Partial<Pick<CheckoutHttpOptions, 'creator' | 'publicUrl' | 'checkoutTimeoutMs'>>,
  query: { orderId?: unknown },
  wantsJson: boolean,
): Promise<HttpAnswer> {
  const logger = options.logger ?? silentLogger;
  // `?orderId=a&orderId=b` names no one order: said so, not "orderId is required".
  if (Array.isArray(query.orderId)) return json(400, errorObject('invalid_request', `orderId is given ${query.orderId.length} times: give it once.`));
  let status: OrderStatus;
  try {
    // A slow service is answered like one that is down: the buyer gets the stored state in time.
    const timeoutMs = options.checkoutTimeoutMs ?? DEFAULT_CHECKOUT_TIMEOUT_MS;
    status = await confirmReturn({ ...options, timeoutMs }, typeof query.orderId === 'string' ? query.orderId : '');
  } catch (error) {
    return errorAnswer(error, logger);
  }
  // Only a URL that passes the guard the checkout used is ever shown to the buyer.
  const guard = options.creator ? redirectGuardFor(options.redirect, creatorEnvironment(options.creator)) : options.redirect;
  status = { ...status, checkoutUrl: safeUrl(status.checkoutUrl, guard) };
  if (wantsJson) return json(200, status);
  return {
    status: 200,
    headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' },
    body: returnPage(status, shopUrl(options.publicUrl)),
  };
}

function safeUrl(url: string | undefined, guard: CheckoutHttpOptions['redirect']): string | undefined {
  if (url === undefined) return undefined;
  try {
    return checkRedirectUrl(url, guard).href;
  } catch {
    return undefined;
  }
}

const escape = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The shop's home page: its public URL with one trailing slash, or the root of this site. */
const shopUrl = (publicUrl: string | undefined) => (publicUrl ? `${publicUrl.replace(/\/+$/, '')}/` : '/');

/**
 * The look of the shop's own pages (the scaffolded shop's home page), so the buyer coming back
 * from the payment page lands somewhere familiar, on a phone too.
 */
const RETURN_STYLE = [
  'body{font-family:system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;line-height:1.5;color:#1d2330}',
  'h1{font-size:1.5rem;margin-bottom:.5rem}',
  '.order{color:#5d6677;overflow-wrap:break-word}',
  '.state{display:inline-block;padding:.1rem .6rem;border-radius:1rem;font-size:.9rem;border:1px solid currentColor}',
  '.paid{color:#1f7a4d}.pending{color:#a35f00}.failed{color:#b3261e}',
  'nav{margin-top:2rem;display:flex;flex-wrap:wrap;gap:.5rem 1.5rem}',
].join('');

function returnPage(status: OrderStatus, shop: string): string {
  const message = {
    paid: 'Thank you: your payment arrived and your order is confirmed.',
    pending: 'We are waiting for your payment to arrive. This page updates when it does.',
    failed: 'This payment expired before the full amount arrived. Please contact us or order again.',
  }[status.state];
  const heading = { paid: 'Order confirmed', pending: 'Waiting for your payment', failed: 'Payment not completed' }[status.state];
  const refresh = status.state === 'pending' ? '<meta http-equiv="refresh" content="5">' : '';
  const payment = status.state === 'pending' && status.checkoutUrl ? `<a href="${escape(status.checkoutUrl)}">Back to the payment page</a>` : '';
  const note = status.note ? `<p data-confirmed="false">${escape(status.note)}</p>` : '';
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">${refresh}<title>Order ${escape(status.orderId)}</title><style>${RETURN_STYLE}</style></head><body>
<h1 data-state="${status.state}">${heading}</h1>
<p class="order">Order ${escape(status.orderId)} <span class="state ${status.state}">${status.state}</span></p>
<p>${message}</p>${note}
<nav>${payment}<a href="${escape(shop)}" id="back-to-shop">Back to the shop</a></nav>
</body></html>`;
}

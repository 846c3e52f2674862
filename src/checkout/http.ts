import { z } from 'zod';
import { CheckoutError, RedirectRejectedError } from '../errors/index.js';
import type { FulfillmentEngine } from '../fulfillment/index.js';
import { silentLogger, type Logger } from '../log/index.js';
import { errorObject } from '../schemas/index.js';
import type { Store } from '../store/index.js';
import { confirmReturn, type OrderStatus } from './confirm-return.js';
import { createCheckout, type Creator } from './create-checkout.js';
import { checkRedirectUrl, type RedirectGuardOptions } from './redirect-guard.js';

/** A framework-free HTTP answer; adapters copy it onto their response. */
export interface HttpAnswer {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

export interface CheckoutHttpOptions {
  store: Store;
  creator: Creator;
  engine: FulfillmentEngine;
  redirect: RedirectGuardOptions;
  /** The shop's public base URL, for the success and cancel links. @example 'https://shop.example' */
  publicUrl: string;
  /** Path of the return page. @default '/checkout/return' */
  returnPath?: string;
  logger?: Logger;
  /**
   * Aborted when the server closes: a checkout or return waiting on the service gives up (a
   * checkout answers 503, a return the stored state, unconfirmed) instead of holding the close.
   */
  signal?: AbortSignal;
}

/** `POST /checkout` fields, from JSON or an HTML form (strings). */
const CheckoutRequestSchema = z.object({
  orderId: z.string().min(1).max(200),
  amount: z.string().min(1),
  email: z.string().optional(),
  token: z.string().optional(),
  networkId: z.union([z.number().int(), z.string().regex(/^[0-9]+$/).transform(Number), z.literal('').transform(() => undefined)]).optional(),
});

const json = (status: number, body: unknown): HttpAnswer => ({ status, headers: { 'content-type': 'application/json; charset=utf-8' }, body });

function errorAnswer(error: unknown, logger: Logger): HttpAnswer {
  if (error instanceof CheckoutError) return json(error.status, errorObject(error.code, error.message));
  logger.error({ err: error }, 'checkout failed unexpectedly');
  return json(500, errorObject('internal_error', 'The checkout failed unexpectedly; the error was logged.'));
}

/** `POST /checkout`: create (or reuse) the order's payment and answer 303 to its checked `checkoutUrl`. */
export async function handleCheckoutRequest(options: CheckoutHttpOptions, body: unknown): Promise<HttpAnswer> {
  const logger = options.logger ?? silentLogger;
  const parsed = CheckoutRequestSchema.safeParse(body ?? {});
  if (!parsed.success) {
    const fields = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ');
    return json(400, errorObject('invalid_request', `Invalid checkout request (${fields}).`));
  }
  const { orderId } = parsed.data;
  const returnUrl = new URL(options.returnPath ?? '/checkout/return', options.publicUrl);
  returnUrl.searchParams.set('orderId', orderId);
  const cancelUrl = new URL(returnUrl);
  cancelUrl.searchParams.set('cancelled', '1');
  try {
    const result = await createCheckout(
      { store: options.store, creator: options.creator, redirect: options.redirect, logger, clock: options.engine.clock, signal: options.signal },
      { ...parsed.data, successUrl: returnUrl.href, cancelUrl: cancelUrl.href },
    );
    const target = checkRedirectUrl(result.checkoutUrl, options.redirect);
    return { status: 303, headers: { location: target.href, 'cache-control': 'no-store' }, body: { ...result, checkoutUrl: target.href } };
  } catch (error) {
    if (error instanceof RedirectRejectedError) {
      logger.error({ orderId, url: error.url.slice(0, 200) }, error.message);
      return json(502, errorObject('bad_checkout_url', 'The payment service answered with a checkout address this shop does not trust; nothing was redirected.'));
    }
    return errorAnswer(error, logger);
  }
}

/** `GET /checkout/return?orderId=…`: confirm and report the order's state, as JSON or a small page. */
export async function handleReturnRequest(
  options: Pick<CheckoutHttpOptions, 'store' | 'engine' | 'logger' | 'redirect' | 'signal'>,
  query: { orderId?: unknown },
  wantsJson: boolean,
): Promise<HttpAnswer> {
  const logger = options.logger ?? silentLogger;
  let status: OrderStatus;
  try {
    status = await confirmReturn(options, typeof query.orderId === 'string' ? query.orderId : '');
  } catch (error) {
    return errorAnswer(error, logger);
  }
  // Only a URL that passes the guard is ever shown to the buyer.
  status = { ...status, checkoutUrl: safeUrl(status.checkoutUrl, options.redirect) };
  if (wantsJson) return json(200, status);
  return { status: 200, headers: { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }, body: returnPage(status) };
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

function returnPage(status: OrderStatus): string {
  const message = {
    paid: 'Thank you: your payment arrived and your order is confirmed.',
    pending: 'We are waiting for your payment to arrive. This page updates when it does.',
    failed: 'This payment expired before the full amount arrived. Please contact us or order again.',
  }[status.state];
  const refresh = status.state === 'pending' ? '<meta http-equiv="refresh" content="5">' : '';
  const link = status.state === 'pending' && status.checkoutUrl ? `<p><a href="${escape(status.checkoutUrl)}">Back to the payment page</a></p>` : '';
  const note = status.note ? `<p data-confirmed="false">${escape(status.note)}</p>` : '';
  return `<!doctype html><html><head><meta charset="utf-8">${refresh}<title>Order ${escape(status.orderId)}</title></head><body><h1 data-state="${status.state}">Order ${escape(status.orderId)}: ${status.state}</h1>${note}<p>${message}</p>${link}</body></html>`;
}

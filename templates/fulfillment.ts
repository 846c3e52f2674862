/**
 * What the shop does when a payment's outcome is known. checkout-kit calls each handler once per
 * payment (or invoice) and outcome, whichever news arrives first: the webhook, the buyer's return
 * to /checkout/return, or `checkout-kit reconcile`. Return to mark the work done; throw to have it
 * retried later (with backoff). `checkout-kit serve` and `checkout-kit reconcile` load this file
 * too (CHECKOUT_HANDLERS changes which file).
 *
 * `resource` is the latest Payment or Invoice as read from the service (not the webhook's copy);
 * `ctx.classification` has its amounts worked out exactly (surplus, shortfall) as decimal strings.
 * `ctx.key` is stable for this resource and outcome: use it as the idempotency key of anything you
 * do downstream (your database write, the shipping request, the refund), so a retry after a crash
 * never does it twice.
 *
 * `recordHandlerCalls` changes nothing unless CHECKOUT_CHECK_RECORD names a file (test keys only):
 * then each handler that returns is appended to it, so `checkout-kit check` can prove every handler
 * ran exactly once in every scenario (see README, "Before going live").
 */
import { defineFulfillment, recordHandlerCalls } from 'checkout-kit';
import { markExpired, markPaid, markUnderpaid } from './src/orders.js';

/** The shop's order id: POST /checkout sends it as the payment's referenceId. */
function orderIdOf(resource: { id: string; referenceId?: string | null | undefined }): string {
  return resource.referenceId ?? resource.id;
}

export default recordHandlerCalls(
  defineFulfillment({
    /**
     * Paid in full (or short by no more than the underpay tolerance). Mark the order paid and ship it,
     * keyed by ctx.key. `ctx.late` means the money arrived after `expiresAt`: `expired` (or
     * `underpaid`) may already have run and released the stock, so check stock before shipping, or
     * refund if it is gone.
     */
    async paid(resource, ctx) {
      const order = markPaid(orderIdOf(resource), { key: ctx.key, late: ctx.late });
      ctx.logger.info({ orderId: order.id, late: ctx.late }, 'order paid');
    },

    /**
     * More than the amount arrived. Fulfil the order as for `paid`, then refund or credit the
     * surplus (amountReceived − amount: ctx.classification.surplus), again keyed by ctx.key so it is
     * never refunded twice. Without this handler, `paid` receives overpaid resources.
     */
    async overpaid(resource, ctx) {
      const { surplus } = ctx.classification;
      const order = markPaid(orderIdOf(resource), { key: ctx.key, late: ctx.late, surplus });
      ctx.logger.info({ orderId: order.id, surplus }, 'order overpaid: refund or credit the surplus');
    },

    /**
     * Some money arrived but not enough, and the payment has expired. Email the buyer about the
     * shortfall (amount − amountReceived: ctx.classification.shortfall) and offer a top-up or a
     * refund. Keep the stock reserved a while: if the rest arrives late, `paid` runs after this.
     */
    async underpaid(resource, ctx) {
      const { shortfall } = ctx.classification;
      const order = markUnderpaid(orderIdOf(resource), shortfall);
      ctx.logger.warn({ orderId: order.id, shortfall }, 'order underpaid: tell the buyer');
    },

    /**
     * Nothing arrived before `expiresAt`. Release the reserved stock and cancel the order. Money can
     * still arrive late: then `paid` runs with ctx.late = true.
     */
    async expired(resource, ctx) {
      const order = markExpired(orderIdOf(resource));
      ctx.logger.info({ orderId: order.id }, 'order expired: stock released');
    },
  }),
);

/**
 * What the platform does when a tenant's payment has an outcome. checkout-kit calls each handler
 * once per payment and outcome, whichever news arrives first: the webhook, the buyer's return to
 * /checkout/return, or `checkout-kit reconcile`. Return to mark the work done; throw to have it
 * retried later. `checkout-kit serve` and `checkout-kit reconcile` load this file too.
 *
 * `ctx.tenantId` and `ctx.merchantId` say whose payment it is. They come from the service's own
 * read of the payment (with the partner's key), never from the webhook's body, so one tenant can
 * never make another tenant's order paid. Order ids are unique per tenant: tenant A's order 1001
 * and tenant B's order 1001 are two orders, kept here as `A/1001` and `B/1001`.
 */
import { defineFulfillment, recordHandlerCalls, type FulfillmentContext } from 'checkout-kit';
import { markExpired, markPaid, markUnderpaid } from './src/orders.js';

/** The tenant's order: POST /checkout sends the order id as the payment's referenceId. */
function orderKeyOf(resource: { id: string; referenceId?: string | null | undefined }, ctx: FulfillmentContext): string {
  const orderId = resource.referenceId ?? resource.id;
  return ctx.tenantId === undefined ? orderId : `${ctx.tenantId}/${orderId}`;
}

export default recordHandlerCalls(
  defineFulfillment({
    /** Paid in full: mark the tenant's order paid and ship it, keyed by ctx.key (see the default scaffold for `ctx.late`). */
    async paid(resource, ctx) {
      const order = markPaid(orderKeyOf(resource, ctx), { key: ctx.key, late: ctx.late });
      ctx.logger.info({ tenantId: ctx.tenantId, orderId: order.id, late: ctx.late }, 'order paid');
    },

    /** More than the amount arrived: fulfil, then refund or credit ctx.classification.surplus to the buyer. */
    async overpaid(resource, ctx) {
      const { surplus } = ctx.classification;
      const order = markPaid(orderKeyOf(resource, ctx), { key: ctx.key, late: ctx.late, surplus });
      ctx.logger.info({ tenantId: ctx.tenantId, orderId: order.id, surplus }, 'order overpaid: refund or credit the surplus');
    },

    /** Expired short of its amount: tell the tenant's buyer about ctx.classification.shortfall. */
    async underpaid(resource, ctx) {
      const { shortfall } = ctx.classification;
      const order = markUnderpaid(orderKeyOf(resource, ctx), shortfall);
      ctx.logger.warn({ tenantId: ctx.tenantId, orderId: order.id, shortfall }, 'order underpaid: tell the buyer');
    },

    /** Nothing arrived in time: release the tenant's stock. Money arriving later runs `paid` with ctx.late. */
    async expired(resource, ctx) {
      const order = markExpired(orderKeyOf(resource, ctx));
      ctx.logger.info({ tenantId: ctx.tenantId, orderId: order.id }, 'order expired: stock released');
    },
  }),
);

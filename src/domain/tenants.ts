/**
 * A partner platform's tenant id: the platform's own, at most 200 characters, without `/` (an
 * order of a tenant is kept as `<tenantId>/<orderId>`: one tenant's order `1001` is never another's).
 */
export const TENANT_ID_PATTERN = /^[^/\u0000\p{Cs}]{1,200}$/u;
/** What `TENANT_ID_PATTERN` asks for, in words. NUL and lone surrogates are refused: the store keeps each as U+FFFD, which would merge two tenants. */
export const TENANT_ID_RULE = 'must be 1 to 200 characters without "/", NUL or a lone surrogate';

/** The longest order key the store keeps, in characters (code points): a tenant's, its tenant id and order id of at most 200 each joined by `/`. */
export const MAX_ORDER_KEY_LENGTH = 200 + 1 + 200;

/** The order key of a tenant's order: order ids are unique per tenant. */
export function tenantOrderKey(tenantId: string, orderId: string): string {
  return `${tenantId}/${orderId}`;
}

/** The tenant of an order key `tenantOrderKey` made; undefined for an order of no tenant. */
export function tenantOfOrderKey(orderKey: string): string | undefined {
  const split = orderKey.indexOf('/');
  return split > 0 ? orderKey.slice(0, split) : undefined;
}

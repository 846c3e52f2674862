/**
 * POST a JSON checkout to a running shop (`serve` or a template) at `origin`, without following its
 * 303: the answer's Location ends with the payment id (`createdPaymentId`). `init` adds to the
 * request, e.g. a `signal`.
 */
export function postCheckout(origin: string, order: Record<string, string>, init: RequestInit = {}): Promise<Response> {
  return fetch(`${origin}/checkout`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(order),
    ...init,
  });
}

/** The payment id at the end of a checkout answer's Location. */
export function createdPaymentId(created: { headers: Headers }): string {
  return created.headers.get('location')!.split('/').pop()!;
}

import type { FastifyInstance } from 'fastify';
import type { SandboxContext } from '../context.js';
import { expireDue } from '../expiry.js';
import { anyCharge } from '../lookup.js';
import { renderCheckoutPage } from '../page/checkout-page.js';
import { checkoutStateOf } from '../page/checkout-state.js';

/** The hosted checkout page at every `checkoutUrl`, and the small JSON it polls. */
export function registerCheckoutRoutes(app: FastifyInstance, context: SandboxContext): void {
  app.get<{ Params: { id: string } }>('/checkout/:id', async (request, reply) => {
    await expireDue(context);
    const state = checkoutStateOf(anyCharge(context.state.data, request.params.id), new Date());
    reply.type('text/html; charset=utf-8').header('cache-control', 'no-store');
    return renderCheckoutPage(state);
  });

  app.get<{ Params: { id: string } }>('/checkout/:id/state', async (request, reply) => {
    await expireDue(context);
    reply.header('cache-control', 'no-store');
    return checkoutStateOf(anyCharge(context.state.data, request.params.id), new Date());
  });
}

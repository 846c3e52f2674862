import type { FastifyInstance } from 'fastify';
import { authenticateMerchant, authenticatePartner, isPartnerKey } from '../auth.js';
import { parseBody, rawBodyOf } from '../body.js';
import type { SandboxContext } from '../context.js';
import { expireDue } from '../expiry.js';
import { idempotencyKeyOf } from '../idempotency.js';
import { ownCharge, partnerCharge } from '../lookup.js';
import type { PaymentRecord } from '../records.js';
import { CreatePaymentBody } from '../requests.js';
import { createCharge } from '../resources/create-charge.js';
import { paymentView } from '../resources/payments.js';
import { sendCreated } from './reply.js';

/** Spec 4.6 and 4.7: merchant key `svc_mk_…` and request signature. */
export function registerPaymentRoutes(app: FastifyInstance, context: SandboxContext): void {
  app.post('/v1/payments', async (request, reply) => {
    const caller = authenticateMerchant(context.state.data, request, rawBodyOf(request).text, 'merchant');
    const key = idempotencyKeyOf(request, false);
    const body = parseBody(request, CreatePaymentBody);
    const { record, replayed } = await createCharge(context, {
      kind: 'payment',
      scope: `${caller.merchant.merchantId}:payments.create`,
      idempotencyKey: key,
      environment: caller.environment,
      merchantId: caller.merchant.merchantId,
      body,
    });
    return sendCreated(reply, replayed, paymentView(record as PaymentRecord, context.baseUrl));
  });

  app.get<{ Params: { id: string } }>('/v1/payments/:id', async (request) => {
    // A partner's key reads the payments it created for its merchants (the default for the spec's
    // gap on who reads a partner's payment), with their merchantId; a merchant's key, its own.
    if (isPartnerKey(request)) {
      const caller = authenticatePartner(context.state.data, request, rawBodyOf(request).text);
      await expireDue(context);
      return paymentView(partnerCharge(context.state.data, request.params.id, caller), context.baseUrl, true);
    }
    const caller = authenticateMerchant(context.state.data, request, rawBodyOf(request).text, 'merchant');
    await expireDue(context);
    return paymentView(ownCharge(context.state.data.payments, request.params.id, caller, 'payment'), context.baseUrl);
  });
}

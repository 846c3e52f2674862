import type { FastifyInstance } from 'fastify';
import { authenticatePartner } from '../auth.js';
import { parseBody, rawBodyOf } from '../body.js';
import { transact, type SandboxContext } from '../context.js';
import { forbidden, notFound } from '../http-error.js';
import { idempotencyKeyOf } from '../idempotency.js';
import { CreateMerchantBody, PartnerCreatePaymentBody } from '../requests.js';
import { createCharge } from '../resources/create-charge.js';
import { merchantView, newMerchant } from '../resources/merchants.js';
import { paymentView } from '../resources/payments.js';
import type { PaymentRecord } from '../records.js';
import { sendCreated } from './reply.js';

/**
 * Spec 4.1 and 4.2: partner key, request signature, required Idempotency-Key. A partner has one
 * `partnerId` in both environments, so idempotency scopes name the environment too.
 */
export function registerPartnerRoutes(app: FastifyInstance, context: SandboxContext): void {
  app.post('/v1/partner/merchants', async (request, reply) => {
    const caller = authenticatePartner(context.state.data, request, rawBodyOf(request).text);
    const key = idempotencyKeyOf(request, true);
    const body = parseBody(request, CreateMerchantBody);
    const outcome = await context.idempotency.run({ scope: `${caller.partner.partnerId}:${caller.environment}:merchants.create`, key, body }, (remember) =>
      transact(context, (data, _emit, now) => {
        const merchant = newMerchant({ partner: caller.partner, input: body, networks: context.options.networks[caller.environment], now: now.toISOString() });
        data.merchants.push(merchant);
        remember(data, merchant.merchantId);
        return merchant.merchantId;
      }),
    );
    const merchant = context.state.data.merchants.find((m) => m.merchantId === outcome.resourceId);
    if (!merchant) throw new Error(`idempotency record points at a missing merchant ${outcome.resourceId}`);
    return sendCreated(reply, outcome.replayed, merchantView(merchant));
  });

  app.post('/v1/partner/payments', async (request, reply) => {
    const caller = authenticatePartner(context.state.data, request, rawBodyOf(request).text);
    const key = idempotencyKeyOf(request, true);
    const body = parseBody(request, PartnerCreatePaymentBody);
    const merchant = context.state.data.merchants.find((m) => m.merchantId === body.merchantId && m.partnerId === caller.partner.partnerId);
    if (!merchant) throw notFound(`Merchant ${body.merchantId} is not a merchant of this partner.`);
    if (merchant.environment !== caller.environment)
      throw forbidden(`Merchant ${body.merchantId} belongs to the ${merchant.environment} environment; use a ${merchant.environment} partner key.`);
    // The whole body (merchantId included) is what an Idempotency-Key is compared against.
    const { record, replayed } = await createCharge(context, {
      kind: 'payment',
      scope: `${caller.partner.partnerId}:${caller.environment}:partner.payments.create`,
      idempotencyKey: key,
      environment: caller.environment,
      merchantId: merchant.merchantId,
      byPartner: true,
      body,
    });
    return sendCreated(reply, replayed, paymentView(record as PaymentRecord, context.baseUrl, true));
  });
}

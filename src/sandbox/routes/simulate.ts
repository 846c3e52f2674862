import type { FastifyInstance } from 'fastify';
import { parseBody } from '../body.js';
import { transact, type SandboxContext } from '../context.js';
import { expireDue } from '../expiry.js';
import { notFound, SandboxHttpError, unprocessable } from '../http-error.js';
import { merchantKeys } from '../seed.js';
import { newWebhookSecret } from '../../webhooks/verify/sign.js';
import { testCharge } from '../lookup.js';
import { isFullyPaid } from '../amounts.js';
import type { AnyCharge, MerchantRecord, SandboxData } from '../records.js';
import { DepositBody, ExpireBody } from '../requests.js';
import { applyDeposit, applyExpiry, chooseOption, eventSuffix } from '../resources/charges.js';
import { chargeView } from '../resources/charge-view.js';

const KINDS = [
  { path: 'payments', kind: 'payment', records: (data: SandboxData): AnyCharge[] => data.payments },
  { path: 'invoices', kind: 'invoice', records: (data: SandboxData): AnyCharge[] => data.invoices },
] as const;

/**
 * Contract 6: simulation endpoints. No key (the sandbox listens on loopback); test-environment
 * resources only. Each answers with the resource as Get returns it after the change.
 */
export function registerSimulationRoutes(app: FastifyInstance, context: SandboxContext): void {
  for (const { path, kind, records } of KINDS) {
    app.post<{ Params: { id: string } }>(`/sandbox/${path}/:id/deposit`, async (request) => {
      const { id } = request.params;
      testCharge(records(context.state.data), id, kind);
      const body = parseBody(request, DepositBody);
      // Announce a due expiry first, so a late deposit's events come after it.
      await expireDue(context);
      const current = testCharge(records(context.state.data), id, kind);
      const option = chooseOption(current, body);
      if ('code' in option) throw unprocessable(option.code, option.message);
      return transact(context, (data, emit, now) => {
        const record = testCharge(records(data), id, kind);
        applyDeposit(record, option, body.amount, now);
        emit(record, eventSuffix(record.status));
        return chargeView(record, context.baseUrl);
      });
    });

    // Move expiresAt to now and expire: `*.expired` once; a paid resource cannot expire (409).
    app.post<{ Params: { id: string } }>(`/sandbox/${path}/:id/expire`, async (request) => {
      const { id } = request.params;
      const current = testCharge(records(context.state.data), id, kind);
      parseBody(request, ExpireBody, { emptyIsObject: true });
      if (isFullyPaid(current.amount, current.amountReceived))
        throw new SandboxHttpError(409, 'invalid_state', `This ${kind} is already paid; it cannot expire.`);
      if (current.expiryNotified) return chargeView(current, context.baseUrl);
      return transact(context, (data, emit, now) => {
        const record = testCharge(records(data), id, kind);
        if (Date.parse(record.expiresAt) > now.getTime()) record.expiresAt = now.toISOString();
        applyExpiry(record, now);
        emit(record, 'expired');
        return chargeView(record, context.baseUrl);
      });
    });
  }

  /**
   * A merchant's own credential, as the service's dashboard would issue it: made once (by `make`,
   * stored in the merchant's `field`), then the same. 404 for an unknown merchant.
   */
  async function issuedOnce<F extends 'keys' | 'webhookSecret'>(id: string, field: F, make: (merchant: MerchantRecord) => NonNullable<MerchantRecord[F]>) {
    const known = context.state.data.merchants.find((m) => m.merchantId === id);
    if (!known) throw notFound(`No merchant with id ${id}.`);
    const issued =
      known[field] ??
      (await transact(context, (data) => {
        const merchant = data.merchants.find((m) => m.merchantId === id)!;
        merchant[field] ??= make(merchant);
        return merchant[field]!;
      }));
    return { known, issued: issued as NonNullable<MerchantRecord[F]> };
  }

  // A partner-created merchant's own keys (the alternative to reading its payments with the partner's keys).
  app.post<{ Params: { id: string } }>('/sandbox/merchants/:id/keys', async (request) => {
    const { id } = request.params;
    const { known, issued } = await issuedOnce(id, 'keys', (merchant) => merchantKeys(merchant.environment));
    return { merchantId: id, environment: known.environment, ...issued };
  });

  // A merchant's own webhook secret (the alternative to signing every partner payment's deliveries
  // with the sandbox's one): its payments' deliveries are then signed with it.
  app.post<{ Params: { id: string } }>('/sandbox/merchants/:id/webhook-secret', async (request) => {
    const { id } = request.params;
    const { known, issued } = await issuedOnce(id, 'webhookSecret', () => newWebhookSecret());
    return { merchantId: id, environment: known.environment, webhookSecret: issued };
  });

  app.get<{ Querystring: { eventId?: string } }>('/sandbox/deliveries', async (request) => {
    const { eventId } = request.query;
    return eventId ? context.state.data.deliveries.filter((d) => d.eventId === eventId) : context.state.data.deliveries;
  });

  app.get<{ Querystring: { type?: string } }>('/sandbox/events', async (request) => {
    const { type } = request.query;
    return type ? context.state.data.events.filter((e) => e.type === type) : context.state.data.events;
  });
}

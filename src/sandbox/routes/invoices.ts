import type { FastifyInstance } from 'fastify';
import { authenticateMerchant } from '../auth.js';
import { parseBody, rawBodyOf } from '../body.js';
import type { SandboxContext } from '../context.js';
import { expireDue } from '../expiry.js';
import { idempotencyKeyOf } from '../idempotency.js';
import { ownCharge } from '../lookup.js';
import type { InvoiceRecord } from '../records.js';
import { CreateInvoiceBody } from '../requests.js';
import { createCharge } from '../resources/create-charge.js';
import { invoiceDetailView, invoiceView } from '../resources/invoices.js';
import { sendCreated } from './reply.js';

/** Most invoices List invoices returns (spec 8). */
export const INVOICE_LIST_LIMIT = 100;

/** Spec 4.3–4.5 with contract 3f: invoice key `test_…` / `live_…`, bearer only. */
export function registerInvoiceRoutes(app: FastifyInstance, context: SandboxContext): void {
  app.post('/v1/invoices', async (request, reply) => {
    const caller = authenticateMerchant(context.state.data, request, rawBodyOf(request).text, 'invoice');
    const key = idempotencyKeyOf(request, false);
    const body = parseBody(request, CreateInvoiceBody);
    const { record, replayed } = await createCharge(context, {
      kind: 'invoice',
      scope: `${caller.merchant.merchantId}:invoices.create`,
      idempotencyKey: key,
      environment: caller.environment,
      merchantId: caller.merchant.merchantId,
      body,
    });
    return sendCreated(reply, replayed, invoiceView(record as InvoiceRecord, context.baseUrl));
  });

  // A bare JSON array, newest first, the caller's own environment only.
  app.get('/v1/invoices', async (request) => {
    const caller = authenticateMerchant(context.state.data, request, rawBodyOf(request).text, 'invoice');
    await expireDue(context);
    return context.state.data.invoices
      .filter((invoice) => invoice.merchantId === caller.merchant.merchantId && invoice.environment === caller.environment)
      .sort((a, b) => b.seq - a.seq)
      .slice(0, INVOICE_LIST_LIMIT)
      .map((invoice) => invoiceView(invoice, context.baseUrl));
  });

  app.get<{ Params: { id: string } }>('/v1/invoices/:id', async (request) => {
    const caller = authenticateMerchant(context.state.data, request, rawBodyOf(request).text, 'invoice');
    await expireDue(context);
    return invoiceDetailView(ownCharge(context.state.data.invoices, request.params.id, caller, 'invoice'), context.baseUrl);
  });
}

import type { Environment } from '../../schemas/index.js';
import { transact, type SandboxContext } from '../context.js';
import { unprocessable } from '../http-error.js';
import { selectRoutes } from '../networks.js';
import type { AnyCharge } from '../records.js';
import { newInvoice, type NewInvoiceInput } from './invoices.js';
import { newPayment, type NewPaymentInput } from './payments.js';

export interface CreateChargeRequest {
  kind: 'payment' | 'invoice';
  /** Idempotency scope: caller and operation. */
  scope: string;
  idempotencyKey: string | undefined;
  environment: Environment;
  merchantId: string;
  /** A partner's create (4.1). */
  byPartner?: boolean;
  body: NewPaymentInput & NewInvoiceInput;
}

/**
 * The create of all three create-payment/invoice operations: idempotency, token/network limits
 * (422), then the record and its `*.created` event written in one state change.
 */
export async function createCharge(context: SandboxContext, request: CreateChargeRequest): Promise<{ record: AnyCharge; replayed: boolean }> {
  const { body, environment } = request;
  const outcome = await context.idempotency.run({ scope: request.scope, key: request.idempotencyKey, body }, (remember) => {
    const routes = selectRoutes(context.options.networks[environment], { networkId: body.networkId, token: body.token });
    if (!Array.isArray(routes)) throw unprocessable(routes.code, routes.message);
    return transact(context, (data, emit, now) => {
      const charge = { environment, merchantId: request.merchantId, routes, now, expiresAfterMs: context.options.expiresAfterMs, seq: ++data.seq };
      const record = request.kind === 'payment' ? newPayment(body, charge) : newInvoice(body, charge);
      if (request.byPartner) record.byPartner = true;
      if (record.kind === 'payment') data.payments.push(record);
      else data.invoices.push(record);
      remember(data, record.id);
      emit(record, 'created');
      return record.id;
    });
  });
  const data = context.state.data;
  const record = request.kind === 'payment' ? data.payments.find((p) => p.id === outcome.resourceId) : data.invoices.find((i) => i.id === outcome.resourceId);
  if (!record) throw new Error(`idempotency record points at a missing ${request.kind} ${outcome.resourceId}`);
  return { record, replayed: outcome.replayed };
}

import { isUuid } from '../schemas/index.js';
import type { MerchantCaller, PartnerCaller } from './auth.js';
import { forbidden, notFound } from './http-error.js';
import type { AnyCharge, PaymentRecord, SandboxData } from './records.js';

function byId<T extends AnyCharge>(records: T[], id: string): T | undefined {
  return isUuid(id) ? records.find((r) => r.id === id) : undefined;
}

/**
 * The caller's own payment or invoice of the key's environment, else 404 (malformed or unknown id,
 * another merchant's, another environment's). Never 403 here: that told a key that some other
 * merchant's record existed. A key sees only its own environment (spec 4.4).
 */
export function ownCharge<T extends AnyCharge>(records: T[], id: string, caller: MerchantCaller, kind: T['kind']): T {
  const record = byId(records, id);
  if (!record || record.merchantId !== caller.merchant.merchantId || record.environment !== caller.environment) {
    throw notFound(`No ${kind} with id ${id} for this merchant in the ${caller.environment} environment.`);
  }
  return record;
}

/** A payment the partner created for one of its merchants, of the key's environment, else 404 (as `ownCharge`). */
export function partnerCharge(data: SandboxData, id: string, caller: PartnerCaller): PaymentRecord {
  const record = byId(data.payments, id);
  const merchant = record && data.merchants.find((m) => m.merchantId === record.merchantId);
  if (!record?.byPartner || merchant?.partnerId !== caller.partner.partnerId || record.environment !== caller.environment) {
    throw notFound(`No payment with id ${id} created by this partner in the ${caller.environment} environment.`);
  }
  return record;
}

/** A resource the simulation endpoints may touch: any merchant's, test environment only (403 for live). */
export function testCharge<T extends AnyCharge>(records: T[], id: string, kind: T['kind']): T {
  const record = byId(records, id);
  if (!record) throw notFound(`No ${kind} with id ${id}.`);
  if (record.environment !== 'test') throw forbidden(`Simulation works on test-environment resources only; this ${kind} is live.`);
  return record;
}

/** A payment or invoice by id, whichever it is (for the checkout page). */
export function anyCharge(records: { payments: AnyCharge[]; invoices: AnyCharge[] }, id: string): AnyCharge {
  const record = byId(records.payments, id) ?? byId(records.invoices, id);
  if (!record) throw notFound(`No payment or invoice with id ${id}.`);
  return record;
}

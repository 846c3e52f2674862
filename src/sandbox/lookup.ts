import { isUuid } from '../schemas/index.js';
import type { MerchantCaller } from './auth.js';
import { forbidden, notFound } from './http-error.js';
import type { AnyCharge } from './records.js';

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

import type { InvoiceDetail, Payment } from '../../schemas/index.js';
import type { AnyCharge } from '../records.js';
import { invoiceDetailView } from './invoices.js';
import { paymentView } from './payments.js';

/**
 * A payment or invoice as its Get operation returns it; a partner's payment with its `merchantId`
 * (the default for the spec's gap: see the README's Assumptions).
 */
export function chargeView(record: AnyCharge, baseUrl: string): Payment | InvoiceDetail {
  return record.kind === 'payment' ? paymentView(record, baseUrl, record.byPartner === true) : invoiceDetailView(record, baseUrl);
}

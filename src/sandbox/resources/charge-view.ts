import type { InvoiceDetail, Payment } from '../../schemas/index.js';
import type { AnyCharge } from '../records.js';
import { invoiceDetailView } from './invoices.js';
import { paymentView } from './payments.js';

/** A payment or invoice as its Get operation returns it. */
export function chargeView(record: AnyCharge, baseUrl: string): Payment | InvoiceDetail {
  return record.kind === 'payment' ? paymentView(record, baseUrl) : invoiceDetailView(record, baseUrl);
}

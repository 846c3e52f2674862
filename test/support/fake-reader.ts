import type { ResourceReader } from '../../src/fulfillment/index.js';
import type { InvoiceDetail, Payment } from '../../src/schemas/index.js';

/** An in-memory stand-in for Get payment / Get invoice, for engine unit tests. */
export class FakeReader implements ResourceReader {
  readonly paymentsById = new Map<string, Payment>();
  readonly invoicesById = new Map<string, InvoiceDetail>();
  reads = 0;

  readonly payments = {
    get: async (id: string, _options?: { signal?: AbortSignal }): Promise<Payment> => {
      this.reads += 1;
      await new Promise((resolve) => setImmediate(resolve));
      const payment = this.paymentsById.get(id);
      if (!payment) throw new Error(`payment ${id} not found`);
      return structuredClone(payment);
    },
  };

  readonly invoices = {
    get: async (id: string): Promise<InvoiceDetail> => {
      this.reads += 1;
      await new Promise((resolve) => setImmediate(resolve));
      const invoice = this.invoicesById.get(id);
      if (!invoice) throw new Error(`invoice ${id} not found`);
      return structuredClone(invoice);
    },
  };

  put(payment: Payment): Payment {
    this.paymentsById.set(payment.id, payment);
    return payment;
  }
}

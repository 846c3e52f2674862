/** zod schemas: the single source of the resource types. All are tolerant of unknown fields. */
export { DECIMAL, DecimalString, EnvironmentSchema, FamilySchema, HttpUrl, Timestamp, Uuid, UUID_PATTERN, isUuid } from './common.js';
export type { Environment } from './common.js';
export { PaymentSchema, PartnerPaymentSchema, PaymentDepositAddressSchema, PaymentReadSchema, PartnerPaymentReadSchema } from './payment.js';
export type { Payment, PartnerPayment, PaymentDepositAddress } from './payment.js';
export {
  InvoiceSchema,
  InvoiceAddressSchema,
  InvoiceTokenSchema,
  InvoiceDetailSchema,
  InvoicePaymentSchema,
  InvoiceSettlementSchema,
  InvoiceListSchema,
} from './invoice.js';
export type { Invoice, InvoiceAddress, InvoiceToken, InvoiceDetail, InvoicePayment, InvoiceSettlement } from './invoice.js';
export { MerchantSchema, MerchantWalletSchema } from './merchant.js';
export type { Merchant, MerchantWallet } from './merchant.js';
export { ErrorObjectSchema, errorObject } from './error.js';
export type { ErrorObject } from './error.js';
export {
  EVENT_TYPES,
  PAYMENT_EVENT_TYPES,
  INVOICE_EVENT_TYPES,
  EventEnvelopeSchema,
  parseEventEnvelope,
  resourceKindOf,
  SAMPLE_EVENT_PREFIX,
  isSampleEvent,
} from './event.js';
export type { CheckoutEvent, PaymentEvent, InvoiceEvent, EventOf, KnownEventType, PaymentEventType, InvoiceEventType } from './event.js';

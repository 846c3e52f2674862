/**
 * Helpers for merchants' own tests (`import { … } from 'checkout-kit/testing'`): realistic sample
 * resources, signed webhook deliveries, and a handler context, so fulfillment handlers and webhook
 * routes can be tested without the service.
 */
export { samplePayment, sampleInvoice, sampleInvoiceDetail, sampleMerchant } from './samples.js';
export { sampleEvent, signedWebhook } from './webhooks.js';
export type { SignedWebhook, SignedWebhookOptions } from './webhooks.js';
export { fulfillmentContext } from './context.js';

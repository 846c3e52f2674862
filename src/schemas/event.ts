import { z } from 'zod';
import { EnvironmentSchema, Timestamp } from './common.js';
import { InvoiceSchema } from './invoice.js';
import { PaymentSchema } from './payment.js';

/** Event types the sandbox emits (contract 3d). Other types are accepted and kept. */
export const PAYMENT_EVENT_TYPES = ['payment.created', 'payment.partially_paid', 'payment.paid', 'payment.overpaid', 'payment.expired'] as const;
/** Invoice event types the sandbox emits. */
export const INVOICE_EVENT_TYPES = ['invoice.created', 'invoice.partially_paid', 'invoice.paid', 'invoice.overpaid', 'invoice.expired'] as const;
/** Every event type the sandbox emits: the payment ones, then the invoice ones. */
export const EVENT_TYPES = [...PAYMENT_EVENT_TYPES, ...INVOICE_EVENT_TYPES] as const;
/** A known payment event type, e.g. `payment.paid`. */
export type PaymentEventType = (typeof PAYMENT_EVENT_TYPES)[number];
/** A known invoice event type, e.g. `invoice.paid`. */
export type InvoiceEventType = (typeof INVOICE_EVENT_TYPES)[number];
/** Any known event type. */
export type KnownEventType = (typeof EVENT_TYPES)[number];

/** Contract 3c: the envelope of every webhook. `data` is validated by the type's prefix. */
export const EventEnvelopeSchema = z.looseObject({
  id: z.string().min(1).max(255),
  type: z.string().min(1).max(255),
  createdAt: Timestamp,
  environment: EnvironmentSchema.optional(),
  data: z.unknown(),
});

/** An event of a known payment type: `data` is a Payment. */
export type PaymentEvent = z.infer<typeof EventEnvelopeSchema> & { type: PaymentEventType; data: z.infer<typeof PaymentSchema> };
/** An event of a known invoice type: `data` is an Invoice. */
export type InvoiceEvent = z.infer<typeof EventEnvelopeSchema> & { type: InvoiceEventType; data: z.infer<typeof InvoiceSchema> };
/** Any event: known types carry a typed `data`, others carry `unknown`. */
export type CheckoutEvent = z.infer<typeof EventEnvelopeSchema>;

/** The event type narrowed from its name: `EventOf<'payment.paid'>` has a Payment in `data`. */
export type EventOf<T extends string> = T extends PaymentEventType
  ? PaymentEvent & { type: T }
  : T extends InvoiceEventType
    ? InvoiceEvent & { type: T }
    : CheckoutEvent;

/**
 * The id prefix of sample events (`checkout-kit trigger` with no sandbox running): they name a
 * resource that exists nowhere, so there is nothing to confirm or fulfil.
 */
export const SAMPLE_EVENT_PREFIX = 'sample_';

/**
 * A sample event: a test-environment event whose id starts with `sample_`. A live event is never
 * one, whatever its id.
 */
export function isSampleEvent(event: Pick<CheckoutEvent, 'id' | 'environment'>): boolean {
  return event.environment === 'test' && event.id.startsWith(SAMPLE_EVENT_PREFIX);
}

/** `payment`, `invoice` or undefined from an event type's prefix. */
export function resourceKindOf(type: string): 'payment' | 'invoice' | undefined {
  if (type.startsWith('payment.')) return 'payment';
  if (type.startsWith('invoice.')) return 'invoice';
  return undefined;
}

/**
 * Parse an envelope; for `payment.*` and `invoice.*` also validate `data`. Returns the zod result so
 * callers decide how to report failures.
 */
export function parseEventEnvelope(value: unknown) {
  const envelope = EventEnvelopeSchema.safeParse(value);
  if (!envelope.success) return envelope;
  const kind = resourceKindOf(envelope.data.type);
  const dataSchema = kind === 'payment' ? PaymentSchema : kind === 'invoice' ? InvoiceSchema : undefined;
  if (!dataSchema) return envelope;
  const data = dataSchema.safeParse(envelope.data.data);
  if (!data.success) {
    return {
      success: false as const,
      error: new z.ZodError(data.error.issues.map((issue) => ({ ...issue, path: ['data', ...issue.path] }))),
    };
  }
  return { success: true as const, data: { ...envelope.data, data: data.data } as CheckoutEvent };
}

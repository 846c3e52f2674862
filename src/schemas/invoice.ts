import { z } from 'zod';
import { DecimalString, EnvironmentSchema, FamilySchema, HttpUrl, Timestamp, Uuid } from './common.js';

/** Spec 2.4: a token accepted at an invoice address. */
export const InvoiceTokenSchema = z.looseObject({
  symbol: z.string(),
  contractAddress: z.string().nullish(),
  decimals: z.number().int(),
});
/** A token accepted at an invoice address. */
export type InvoiceToken = z.infer<typeof InvoiceTokenSchema>;

/** Spec 2.4: one deposit address of an invoice. */
export const InvoiceAddressSchema = z.looseObject({
  chainId: Uuid.optional(),
  chainName: z.string().optional(),
  family: FamilySchema.optional(),
  networkId: z.number().int(),
  depositAddress: z.string(),
  tokens: z.array(InvoiceTokenSchema).optional(),
});
/** One deposit address of an invoice. */
export type InvoiceAddress = z.infer<typeof InvoiceAddressSchema>;

/** Spec 2.3: an invoice as Create invoice and List invoices return it. */
export const InvoiceSchema = z.looseObject({
  id: Uuid,
  status: z.string(),
  environment: EnvironmentSchema,
  amount: DecimalString,
  amountReceived: DecimalString.optional(),
  referenceId: z.string().nullish(),
  checkoutUrl: HttpUrl.optional(),
  expiresAt: Timestamp.nullish(),
  addresses: z.array(InvoiceAddressSchema).optional(),
  createdAt: Timestamp.optional(),
  updatedAt: Timestamp.optional(),
});
/** An invoice as Create invoice and List invoices return it. */
export type Invoice = z.infer<typeof InvoiceSchema>;

/**
 * A field of an entry whose shape the spec does not show (spec 4.5): its value when it has the
 * expected type, else absent. An odd value (`null`, a number for a string) never fails the entry.
 */
function lenient<T extends z.ZodType>(schema: T) {
  return schema.optional().catch(undefined);
}

/**
 * The entries of a list whose shape the spec does not show: objects are kept (unknown fields too),
 * anything else (`null`, a string) is skipped, and a missing or malformed list is empty. Get
 * invoice must never fail over these: that would leave a paid invoice unfulfilled.
 */
function tolerantList<T extends z.ZodType>(entry: T) {
  return z
    .unknown()
    .optional()
    .transform((value): Array<z.output<T>> =>
      Array.isArray(value)
        ? value.flatMap((item) => {
            const parsed = entry.safeParse(item);
            return parsed.success ? [parsed.data] : [];
          })
        : [],
    );
}

/** A payment entry of an invoice's detail (shape not shown in the spec: every field lenient). */
export const InvoicePaymentSchema = z.looseObject({
  id: lenient(z.string()),
  status: lenient(z.string()),
  amount: lenient(DecimalString),
  amountReceived: lenient(DecimalString),
  token: lenient(z.string()),
  networkId: lenient(z.number().int()),
  txHash: lenient(z.string()),
  createdAt: lenient(Timestamp),
});
/** A payment entry of an invoice's detail. */
export type InvoicePayment = z.infer<typeof InvoicePaymentSchema>;

/** A settlement entry of an invoice's detail (shape not shown in the spec: every field lenient). */
export const InvoiceSettlementSchema = z.looseObject({
  id: lenient(z.string()),
  status: lenient(z.string()),
  amount: lenient(DecimalString),
  createdAt: lenient(Timestamp),
});
/** A settlement entry of an invoice's detail. */
export type InvoiceSettlement = z.infer<typeof InvoiceSettlementSchema>;

/** Spec 4.5 / contract 3f: Get invoice adds payments and settlements (tolerantly read). */
export const InvoiceDetailSchema = InvoiceSchema.extend({
  payments: tolerantList(InvoicePaymentSchema),
  settlements: tolerantList(InvoiceSettlementSchema),
});
/** An invoice as Get invoice returns it: with its payments and settlements. */
export type InvoiceDetail = z.infer<typeof InvoiceDetailSchema>;

/**
 * List invoices (contract 3f). The spec does not show the shape: both a bare array and an object
 * with `data` (or `invoices`) are accepted and normalised to an array.
 */
export const InvoiceListSchema = z.union([
  z.array(InvoiceSchema),
  z.looseObject({ data: z.array(InvoiceSchema) }).transform((value) => value.data),
  z.looseObject({ invoices: z.array(InvoiceSchema) }).transform((value) => value.invoices),
]);

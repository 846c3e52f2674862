import { z } from 'zod';
import { DecimalString, EnvironmentSchema, FamilySchema, Timestamp } from './common.js';

/** Spec 2.4: a token accepted at an invoice address. */
export const InvoiceTokenSchema = z.looseObject({
  symbol: z.string(),
  contractAddress: z.string().nullish(),
  decimals: z.number().int(),
});
export type InvoiceToken = z.infer<typeof InvoiceTokenSchema>;

/** Spec 2.4: one deposit address of an invoice. */
export const InvoiceAddressSchema = z.looseObject({
  chainId: z.string().optional(),
  chainName: z.string().optional(),
  family: FamilySchema.optional(),
  networkId: z.number().int(),
  depositAddress: z.string(),
  tokens: z.array(InvoiceTokenSchema).optional(),
});
export type InvoiceAddress = z.infer<typeof InvoiceAddressSchema>;

/** Spec 2.3: an invoice as Create invoice and List invoices return it. */
export const InvoiceSchema = z.looseObject({
  id: z.string().min(1),
  status: z.string(),
  environment: EnvironmentSchema.optional(),
  amount: DecimalString,
  amountReceived: DecimalString.optional(),
  referenceId: z.string().nullish(),
  checkoutUrl: z.string().optional(),
  expiresAt: Timestamp.nullish(),
  addresses: z.array(InvoiceAddressSchema).optional(),
  createdAt: Timestamp.optional(),
  updatedAt: Timestamp.optional(),
});
export type Invoice = z.infer<typeof InvoiceSchema>;

/** A payment entry of an invoice's detail (shape not shown in the spec: every field optional). */
export const InvoicePaymentSchema = z.looseObject({
  id: z.string().optional(),
  status: z.string().optional(),
  amount: DecimalString.optional(),
  amountReceived: DecimalString.optional(),
  token: z.string().nullish(),
  networkId: z.number().int().optional(),
  txHash: z.string().optional(),
  createdAt: Timestamp.optional(),
});
export type InvoicePayment = z.infer<typeof InvoicePaymentSchema>;

/** A settlement entry of an invoice's detail (shape not shown in the spec: every field optional). */
export const InvoiceSettlementSchema = z.looseObject({
  id: z.string().optional(),
  status: z.string().optional(),
  amount: DecimalString.optional(),
  createdAt: Timestamp.optional(),
});
export type InvoiceSettlement = z.infer<typeof InvoiceSettlementSchema>;

/** Spec 4.5 / contract 3f: Get invoice adds payments and settlements. */
export const InvoiceDetailSchema = InvoiceSchema.extend({
  payments: z.array(InvoicePaymentSchema).default([]),
  settlements: z.array(InvoiceSettlementSchema).default([]),
});
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

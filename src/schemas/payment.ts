import { z } from 'zod';
import { DecimalString, EnvironmentSchema, FamilySchema, Timestamp } from './common.js';

/** Spec 2.2: one deposit address of a payment. Unknown fields are kept. */
export const PaymentDepositAddressSchema = z.looseObject({
  networkId: z.number().int(),
  chainName: z.string().optional(),
  family: FamilySchema.optional(),
  address: z.string(),
  token: z.string().optional(),
  chainId: z.string().optional(),
});
export type PaymentDepositAddress = z.infer<typeof PaymentDepositAddressSchema>;

/**
 * Spec 2.1: a payment. `status` is any string (the spec lists none); the outcome is computed from
 * the amounts and `expiresAt`, not from it. `merchantId` appears on partner-created payments only.
 */
export const PaymentSchema = z.looseObject({
  id: z.string().min(1),
  status: z.string(),
  environment: EnvironmentSchema.optional(),
  addressMode: z.string().optional(),
  amount: DecimalString,
  amountReceived: DecimalString.optional(),
  remaining: DecimalString.optional(),
  surplus: DecimalString.optional(),
  token: z.string().nullish(),
  referenceId: z.string().nullish(),
  email: z.string().nullish(),
  checkoutUrl: z.string().optional(),
  expiresAt: Timestamp.nullish(),
  successUrl: z.string().nullish(),
  cancelUrl: z.string().nullish(),
  depositAddresses: z.array(PaymentDepositAddressSchema).optional(),
  createdAt: Timestamp.optional(),
  updatedAt: Timestamp.optional(),
  merchantId: z.string().optional(),
});
export type Payment = z.infer<typeof PaymentSchema>;

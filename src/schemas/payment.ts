import { z } from 'zod';
import { DecimalString, EnvironmentSchema, FamilySchema, HttpUrl, Timestamp, Uuid } from './common.js';

/** Spec 2.2: one deposit address of a payment. Unknown fields are kept. */
export const PaymentDepositAddressSchema = z.looseObject({
  networkId: z.number().int(),
  chainName: z.string().optional(),
  family: FamilySchema.optional(),
  address: z.string(),
  token: z.string().optional(),
  chainId: Uuid.optional(),
});
/** One deposit address of a payment. */
export type PaymentDepositAddress = z.infer<typeof PaymentDepositAddressSchema>;

/**
 * Spec 2.1: a payment. `status` is any string (the spec lists none); the outcome is computed from
 * the amounts and `expiresAt`, not from it. Optional strings may also come as `null` (read as
 * "absent"): refusing them would leave a paid order unfulfilled over a field nobody needs.
 * Only the partner create response carries `merchantId` (see `PartnerPaymentSchema`).
 */
export const PaymentSchema = z.looseObject({
  id: Uuid,
  status: z.string(),
  environment: EnvironmentSchema,
  addressMode: z.string().optional(),
  amount: DecimalString,
  amountReceived: DecimalString.optional(),
  remaining: DecimalString.optional(),
  surplus: DecimalString.optional(),
  token: z.string().nullish(),
  referenceId: z.string().nullish(),
  email: z.string().nullish(),
  checkoutUrl: HttpUrl.optional(),
  expiresAt: Timestamp.nullish(),
  successUrl: z.string().nullish(),
  cancelUrl: z.string().nullish(),
  depositAddresses: z.array(PaymentDepositAddressSchema).optional(),
  createdAt: Timestamp.optional(),
  updatedAt: Timestamp.optional(),
  merchantId: Uuid.optional(),
});
/** A payment as the service returns it. */
export type Payment = z.infer<typeof PaymentSchema>;

/** Spec 4.1: the partner create-payment response, the one payment that must carry `merchantId`. */
export const PartnerPaymentSchema = PaymentSchema.extend({ merchantId: Uuid });

/**
 * Spec 4.7: a payment read by id, whose `amountReceived` decides its outcome. A read without it is
 * off the spec, not "nothing received": past expiry that would call a paid order's `expired` handler.
 */
export const PaymentReadSchema = PaymentSchema.extend({ amountReceived: DecimalString });
/** A payment read with the partner's key: `PaymentReadSchema` with the payment's `merchantId`. */
export const PartnerPaymentReadSchema = PartnerPaymentSchema.extend({ amountReceived: DecimalString });
/** A payment as a partner's create returns it: with the merchant it is for. */
export type PartnerPayment = z.infer<typeof PartnerPaymentSchema>;

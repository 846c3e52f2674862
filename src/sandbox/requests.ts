import { z } from 'zod';
import { amountIsZero, isAmount } from '../money/index.js';
import { HttpUrl, Uuid } from '../schemas/index.js';

const amount = z
  .string()
  .max(64, 'amount is too long')
  .refine((v) => isAmount(v) && !amountIsZero(v), 'expected a positive decimal string such as "10.50" (no sign, exponent or more than 18 decimals)');
const url = HttpUrl;
const networkId = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);
const token = z.string().min(1).max(32);
const referenceId = z.string().min(1).max(255);

/** Create payment (merchant, spec 4.6). `successUrl` and `cancelUrl` are accepted too. */
export const CreatePaymentBody = z.strictObject({
  amount,
  email: z.email().optional(),
  token: token.optional(),
  networkId: networkId.optional(),
  referenceId: referenceId.optional(),
  successUrl: url.optional(),
  cancelUrl: url.optional(),
});

/** Create payment (partner, spec 4.1). */
export const PartnerCreatePaymentBody = z.strictObject({
  ...CreatePaymentBody.shape,
  merchantId: Uuid,
});

/** Create invoice (spec 4.3), plus optional `referenceId`, `successUrl`, `cancelUrl`. */
export const CreateInvoiceBody = z.strictObject({
  amount,
  networkId: networkId.optional(),
  token: token.optional(),
  referenceId: referenceId.optional(),
  successUrl: url.optional(),
  cancelUrl: url.optional(),
});

/** Create merchant (spec 4.2): all three fields required. */
export const CreateMerchantBody = z.strictObject({
  externalTenantId: z.string().min(1).max(255),
  // An address under `.invalid` (reserved by RFC 2606, never deliverable) is refused, as a service
  // checking its merchants' addresses would: the way to see an onboarding refused in the sandbox.
  email: z.email().refine((email) => !/\.invalid$/i.test(email), { message: 'cannot be delivered to (a .invalid domain)' }),
  name: z.string().min(1).max(255),
});

/** `POST /sandbox/{kind}/{id}/deposit`. */
export const DepositBody = z.strictObject({ amount, networkId: networkId.optional(), token: token.optional() });

/** `POST /sandbox/{kind}/{id}/expire`: no fields. */
export const ExpireBody = z.strictObject({});

import { z } from 'zod';
import { InvalidRequestError, MoneyError } from '../errors/index.js';
import { amountIsZero, assertAmount } from '../money/index.js';
import { HttpUrl, isUuid, Uuid } from '../schemas/index.js';

/**
 * A positive decimal string. A malformed amount throws MoneyError with its own message; zero is
 * refused here too, since the service refuses it (the sandbox answers 400): better one clear
 * error before sending than an ApiError after.
 */
const amount = z.custom<string>((value) => {
  assertAmount(value);
  if (amountIsZero(value)) {
    throw new MoneyError(
      `amount "${value}" is zero: nothing can be paid for it. Charge a positive amount such as "10.50", or skip the checkout when nothing is owed.`,
    );
  }
  return true;
});
const url = HttpUrl;

/** Create payment (merchant, spec 4.6). Only these fields are sent; `environment` never is. */
export const CreatePaymentInputSchema = z.object({
  amount,
  email: z.email().optional(),
  token: z.string().min(1).optional(),
  networkId: z.number().int().positive().optional(),
  referenceId: z.string().min(1).max(255).optional(),
  /** Not shown in the spec for the merchant operation; sent only when given. */
  successUrl: url.optional(),
  cancelUrl: url.optional(),
});
/** A merchant's Create payment request, checked before it is sent. */
export type CreatePaymentInput = z.input<typeof CreatePaymentInputSchema>;

/** Create payment (partner, spec 4.1): `merchantId` is the merchant's UUID. */
export const PartnerCreatePaymentInputSchema = CreatePaymentInputSchema.extend({
  merchantId: Uuid,
});
/** A partner's Create payment request: a payment's fields plus the merchant it is for. */
export type PartnerCreatePaymentInput = z.input<typeof PartnerCreatePaymentInputSchema>;

/** Create invoice (spec 4.3). */
export const CreateInvoiceInputSchema = z.object({
  amount,
  networkId: z.number().int().positive().optional(),
  token: z.string().min(1).optional(),
  referenceId: z.string().min(1).max(255).optional(),
});
/** A Create invoice request, checked before it is sent. */
export type CreateInvoiceInput = z.input<typeof CreateInvoiceInputSchema>;

/** Create merchant (partner, spec 4.2). */
export const CreateMerchantInputSchema = z.object({
  externalTenantId: z.string().min(1),
  email: z.email(),
  name: z.string().min(1),
});
/** A partner's Create merchant request, checked before it is sent. */
export type CreateMerchantInput = z.input<typeof CreateMerchantInputSchema>;

/**
 * Validate caller input before anything is sent. Money errors keep their own class and message;
 * everything else becomes one InvalidRequestError naming each bad field. Unknown keys (including
 * `environment`) are refused, never forwarded.
 */
export function parseInput<S extends z.ZodObject>(schema: S, input: unknown, operation: string): z.output<S> {
  if (input !== null && typeof input === 'object' && 'environment' in input) {
    throw new InvalidRequestError(`${operation}: do not send "environment": the service takes it from the API key.`);
  }
  // A bad amount throws MoneyError from inside the schema, with its own precise message.
  const result = schema.strict().safeParse(input);
  if (result.success) return result.data as z.output<S>;
  const fields = result.error.issues.map((issue) => `${issue.path.join('.') || '(input)'}: ${issue.message}`).join('; ');
  throw new InvalidRequestError(`${operation}: invalid input (${fields}); nothing was sent.`);
}

/** Ids in paths must be UUIDs (spec 4.7); checked before sending so a typo never becomes a 404 storm. */
export function pathId(id: unknown, operation: string): string {
  if (!isUuid(id)) {
    throw new InvalidRequestError(`${operation}: id must be a UUID, got ${JSON.stringify(id)}.`);
  }
  return encodeURIComponent(id);
}

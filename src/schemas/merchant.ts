import { z } from 'zod';
import { FamilySchema, Timestamp, Uuid } from './common.js';

/** Spec 2.5: a wallet of a merchant. */
export const MerchantWalletSchema = z.looseObject({
  networkId: z.number().int(),
  chainName: z.string().optional(),
  family: FamilySchema.optional(),
  address: z.string(),
  addressDisplay: z.string().optional(),
  registered: z.boolean().optional(),
});
/** A wallet of a merchant. */
export type MerchantWallet = z.infer<typeof MerchantWalletSchema>;

/** Spec 2.5: a merchant created by a partner. Optional strings may come as `null` (absent). */
export const MerchantSchema = z.looseObject({
  merchantId: Uuid,
  organizationId: Uuid.optional(),
  partnerId: Uuid.optional(),
  externalTenantId: z.string().nullish(),
  name: z.string().nullish(),
  email: z.string().nullish(),
  integrationStatus: z.string().optional(),
  liveRequestedAt: Timestamp.nullish(),
  liveApprovedAt: Timestamp.nullish(),
  dashboardAccess: z.boolean().optional(),
  wallets: z.array(MerchantWalletSchema).optional(),
  registeredFamilies: z.looseObject({ evm: z.boolean().optional(), tron: z.boolean().optional() }).optional(),
  createdAt: Timestamp.optional(),
  updatedAt: Timestamp.optional(),
});
/** A merchant created by a partner. */
export type Merchant = z.infer<typeof MerchantSchema>;

import { randomUUID } from 'node:crypto';
import type { Merchant } from '../../schemas/index.js';
import { newAddress, shortAddress } from '../addresses.js';
import type { NetworkSpec } from '../networks.js';
import type { MerchantRecord, PartnerAccount } from '../records.js';
import { withoutNulls } from './without-nulls.js';

export interface NewMerchantInput {
  externalTenantId: string;
  name: string;
  email: string;
}

/**
 * A merchant of `partner` with a payout wallet on every enabled network. Test merchants are active
 * at once; live ones are shown as requested and approved at creation.
 */
export function newMerchant(args: { partner: PartnerAccount; input: NewMerchantInput; networks: NetworkSpec[]; now: string }): MerchantRecord {
  const { partner, input, networks, now } = args;
  const live = partner.environment === 'live';
  return {
    merchantId: randomUUID(),
    organizationId: randomUUID(),
    partnerId: partner.partnerId,
    externalTenantId: input.externalTenantId,
    name: input.name,
    email: input.email,
    integrationStatus: 'ACTIVE',
    liveRequestedAt: live ? now : null,
    liveApprovedAt: live ? now : null,
    dashboardAccess: false,
    wallets: networks.map((network) => {
      const address = newAddress(network.family);
      return {
        networkId: network.networkId,
        chainName: network.chainName,
        family: network.family,
        address,
        addressDisplay: shortAddress(address),
        registered: true,
      };
    }),
    registeredFamilies: { evm: networks.some((n) => n.family === 'evm'), tron: networks.some((n) => n.family === 'tron') },
    createdAt: now,
    updatedAt: now,
    environment: partner.environment,
    keys: null,
  };
}

/** The spec's Merchant (2.5): the record without the sandbox's own fields, and without `null`s. */
export function merchantView(record: MerchantRecord): Merchant {
  const { environment: _environment, keys: _keys, ...merchant } = record;
  return withoutNulls(merchant);
}

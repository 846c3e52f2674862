import type { Environment, InvoiceAddress, PaymentDepositAddress } from '../schemas/index.js';

/** Statuses the sandbox uses (contract 3e). */
export const STATUSES = ['CREATED', 'PARTIALLY_PAID', 'PAID', 'OVERPAID', 'EXPIRED'] as const;
export type Status = (typeof STATUSES)[number];

/**
 * A partner's credentials for one environment. The test and live accounts of one partner share
 * `partnerId` (one partner, a key pair per environment), so a partner key meeting its own merchant
 * of the other environment gets 403, not 404 (contract 3g).
 */
export interface PartnerAccount {
  partnerId: string;
  organizationId: string;
  environment: Environment;
  apiKey: string;
  signingSecret: string;
}

/** Keys of a seeded merchant. Partner-created merchants have none (they are paid through the partner). */
export interface MerchantKeys {
  apiKey: string;
  signingSecret: string;
  invoiceKey: string;
}

/** A merchant: the spec's Merchant (2.5) fields plus the sandbox's own. */
export interface MerchantRecord {
  merchantId: string;
  organizationId: string;
  partnerId: string;
  externalTenantId: string | null;
  name: string | null;
  email: string | null;
  integrationStatus: string;
  liveRequestedAt: string | null;
  liveApprovedAt: string | null;
  dashboardAccess: boolean;
  wallets: Array<{ networkId: number; chainName: string; family: string; address: string; addressDisplay: string; registered: boolean }>;
  registeredFamilies: { evm: boolean; tron: boolean };
  createdAt: string;
  updatedAt: string;
  environment: Environment;
  keys: MerchantKeys | null;
  /** Its own webhook secret (`POST /sandbox/merchants/:id/webhook-secret`): its payments' deliveries are signed with it instead of the sandbox's. */
  webhookSecret?: string;
}

/** One simulated on-chain deposit. */
export interface DepositRecord {
  id: string;
  amount: string;
  networkId: number;
  chainName: string;
  token: string;
  address: string;
  txHash: string;
  /** Received after `expiresAt`. */
  late: boolean;
  createdAt: string;
}

/** What payments and invoices share: amounts, status, expiry and deposits. */
export interface ChargeRecord {
  id: string;
  environment: Environment;
  merchantId: string;
  status: Status;
  amount: string;
  amountReceived: string;
  referenceId: string | null;
  successUrl: string | null;
  cancelUrl: string | null;
  expiresAt: string;
  createdAt: string;
  updatedAt: string;
  /** Creation order, to list newest first when timestamps tie. */
  seq: number;
  /** The expiry event was emitted (once per resource). */
  expiryNotified: boolean;
  /** Created by a partner for one of its merchants (4.1): its events and its partner's reads carry `merchantId`. */
  byPartner?: boolean;
  deposits: DepositRecord[];
}

export interface PaymentRecord extends ChargeRecord {
  kind: 'payment';
  token: string | null;
  email: string | null;
  depositAddresses: PaymentDepositAddress[];
}

export interface SettlementRecord {
  id: string;
  status: 'SETTLED';
  amount: string;
  createdAt: string;
}

export interface InvoiceRecord extends ChargeRecord {
  kind: 'invoice';
  token: string | null;
  networkId: number | null;
  addresses: InvoiceAddress[];
  settlements: SettlementRecord[];
}

export type AnyCharge = PaymentRecord | InvoiceRecord;

/** A completed idempotent create: replays answer with the resource's current state. */
export interface IdempotencyRecord {
  scope: string;
  key: string;
  bodyHash: string;
  resourceId: string;
  createdAt: string;
}

/** A webhook event as sent (contract 3c). */
export interface SandboxEvent {
  id: string;
  type: string;
  createdAt: string;
  environment: Environment;
  data: Record<string, unknown>;
}

/** One delivery attempt (or a dropped delivery, attempt 0) of an event to one URL. */
export interface DeliveryRecord {
  id: string;
  eventId: string;
  type: string;
  url: string;
  /** 1 for the first try; 0 for a dropped delivery (never sent). */
  attempt: number;
  statusCode: number | null;
  error: string | null;
  delivered: boolean;
  dropped: boolean;
  duplicated: boolean;
  staleTimestamp: boolean;
  /** The `webhook-timestamp` signed (unix seconds), null when not sent. */
  signedTimestamp: number | null;
  startedAt: string;
  finishedAt: string;
  /** When the next attempt is due; null when this was the last. */
  nextAttemptAt: string | null;
}

/** Everything the sandbox persists in `DATA/sandbox.json`. */
export interface SandboxData {
  version: 1;
  webhookSecret: string;
  seq: number;
  partners: PartnerAccount[];
  merchants: MerchantRecord[];
  payments: PaymentRecord[];
  invoices: InvoiceRecord[];
  idempotency: IdempotencyRecord[];
  events: SandboxEvent[];
  deliveries: DeliveryRecord[];
}

export function emptyData(): SandboxData {
  return { version: 1, webhookSecret: '', seq: 0, partners: [], merchants: [], payments: [], invoices: [], idempotency: [], events: [], deliveries: [] };
}

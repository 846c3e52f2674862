import { randomUUID } from 'node:crypto';
import { compareAmounts } from '../../money/index.js';
import { newTxHash } from '../addresses.js';
import { isFullyPaid, scaled, statusOf, sumOf } from '../amounts.js';
import type { RouteProblem } from '../networks.js';
import type { AnyCharge, DepositRecord, Status } from '../records.js';

/** One way to pay a resource: an address on a network for a token. */
export interface DepositOption {
  networkId: number;
  chainName: string;
  family: 'evm' | 'tron';
  token: string;
  address: string;
}

/** Every (network, token, address) the buyer may use, in the resource's order. */
export function depositOptions(record: AnyCharge): DepositOption[] {
  const family = (value: string | undefined): 'evm' | 'tron' => (value === 'tron' ? 'tron' : 'evm');
  if (record.kind === 'payment') {
    return record.depositAddresses.map((a) => ({
      networkId: a.networkId,
      chainName: a.chainName ?? '',
      family: family(a.family),
      token: a.token ?? '',
      address: a.address,
    }));
  }
  return record.addresses.flatMap((a) =>
    (a.tokens ?? []).map((t) => ({
      networkId: a.networkId,
      chainName: a.chainName ?? '',
      family: family(a.family),
      token: t.symbol,
      address: a.depositAddress,
    })),
  );
}

export function isPastExpiry(record: AnyCharge, now: Date): boolean {
  return Date.parse(record.expiresAt) <= now.getTime();
}

/** The event suffix for a status: `PARTIALLY_PAID` → `partially_paid`. */
export function eventSuffix(status: Status): string {
  return status.toLowerCase();
}

/**
 * Due for the expiry event: past `expiresAt`, not fully paid, not yet announced. A resource with
 * nothing received becomes `EXPIRED`; a partly paid one keeps `PARTIALLY_PAID` (its amounts tell
 * the receiver it is underpaid) but still gets one `*.expired` event.
 */
export function isExpiryDue(record: AnyCharge, now: Date): boolean {
  return !record.expiryNotified && isPastExpiry(record, now) && !isFullyPaid(record.amount, record.amountReceived);
}

export function applyExpiry(record: AnyCharge, now: Date): void {
  record.expiryNotified = true;
  record.status = statusOf(record.amount, record.amountReceived, true);
  record.updatedAt = now.toISOString();
}

export interface DepositInput {
  amount: string;
  networkId?: number | undefined;
  token?: string | undefined;
}

/** The option a simulated deposit goes to, or the 422 problem when the resource offers none. */
export function chooseOption(record: AnyCharge, input: DepositInput): DepositOption | RouteProblem {
  let options = depositOptions(record);
  if (input.networkId !== undefined) {
    options = options.filter((o) => o.networkId === input.networkId);
    if (options.length === 0) return { code: 'network_not_available', message: `this ${record.kind} has no deposit address on network ${input.networkId}.` };
  }
  if (input.token !== undefined) {
    const wanted = input.token.toUpperCase();
    options = options.filter((o) => o.token.toUpperCase() === wanted);
    if (options.length === 0)
      return {
        code: 'token_not_available',
        message: `this ${record.kind} does not accept ${input.token}${input.networkId === undefined ? '' : ` on network ${input.networkId}`}.`,
      };
  }
  return options[0]!;
}

/**
 * Record a deposit: `amountReceived` grows (also after expiry: late money counts) and the status
 * follows. Invoices get a settlement for money that completes or exceeds the amount.
 */
export function applyDeposit(record: AnyCharge, option: DepositOption, amount: string, now: Date): DepositRecord {
  const at = now.toISOString();
  const deposit: DepositRecord = {
    id: randomUUID(),
    amount,
    networkId: option.networkId,
    chainName: option.chainName,
    token: option.token,
    address: option.address,
    txHash: newTxHash(option.family),
    late: isPastExpiry(record, now),
    createdAt: at,
  };
  const before = record.amountReceived;
  record.deposits.push(deposit);
  record.amountReceived = scaled(sumOf(before, amount), record.amount);
  record.status = statusOf(record.amount, record.amountReceived, isPastExpiry(record, now));
  record.updatedAt = at;
  if (record.kind === 'invoice' && isFullyPaid(record.amount, record.amountReceived)) {
    // The first settlement carries everything received so far; later ones each extra deposit.
    const settled = compareAmounts(before, record.amount) >= 0 ? amount : record.amountReceived;
    record.settlements.push({ id: randomUUID(), status: 'SETTLED', amount: settled, createdAt: at });
  }
  return deposit;
}

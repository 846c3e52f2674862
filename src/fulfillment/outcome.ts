import { ExactDecimal, toDecimal, writtenLike } from '../money/index.js';
import type { Outcome } from '../store/index.js';

/** What a status word tells beyond the amounts: `closed` = past expiry, `hold` = not final yet. */
export type StatusMeaning = 'closed' | 'hold';

/** The outcome rules: underpay tolerance, what status words mean, and the time to judge expiry by. */
export interface ClassifyOptions {
  /**
   * Shortfall still counted as paid. `absolute` in the resource's unit, `percent` of the amount;
   * when both are given the larger allowance wins. @default none (exact amount required)
   * @example { absolute: '0.01' }
   */
  underpayTolerance?: { absolute?: string; percent?: string };
  /**
   * Status words that refine the amounts' verdict. They can close a resource early (`closed`: the
   * service says it expired, even if our clock disagrees) or hold it (`hold`: money seen but not
   * final), never make it paid.
   * @default { EXPIRED: 'closed' }
   */
  statusMap?: Record<string, StatusMeaning>;
  /** @default new Date() */
  now?: Date;
}

/** The fields classification reads; Payment and Invoice (detail) both fit. */
export interface Classifiable {
  status?: string | undefined;
  amount: string;
  amountReceived?: string | undefined;
  expiresAt?: string | null | undefined;
  updatedAt?: string | undefined;
  payments?: Array<{ amountReceived?: string | undefined; amount?: string | undefined }> | undefined;
}

/** A resource's outcome worked out exactly from its amounts, with the shortfall or surplus as decimal strings. */
export interface Classification {
  outcome: Outcome;
  /** Money reached the amount after `expiresAt`. */
  late: boolean;
  amount: string;
  /** The resource's own figure as the service wrote it (`"10.00"`), else the sum of an invoice detail's payments. */
  amountReceived: string;
  /** amount − received when positive, written with the decimals of the figures it comes from (`"1.00"`), else "0". */
  shortfall: string;
  /** received − amount when positive, written with the decimals of the figures it comes from (`"1.00"`), else "0". */
  surplus: string;
}

export const DEFAULT_STATUS_MAP: Record<string, StatusMeaning> = { EXPIRED: 'closed' };

/** What each of an invoice detail's payments received, as written. */
const paymentFigures = (resource: Classifiable) => (resource.payments ?? []).flatMap((payment) => payment.amountReceived ?? payment.amount ?? []);

/** Received amount: the resource's own figure, or the sum of an invoice detail's payments. */
function receivedOf(resource: Classifiable): ExactDecimal {
  if (resource.amountReceived !== undefined) return toDecimal(resource.amountReceived, 'amountReceived');
  return paymentFigures(resource).reduce((sum, value) => sum.plus(toDecimal(value, 'payments[].amount')), new ExactDecimal(0));
}

function allowance(amount: ExactDecimal, tolerance: ClassifyOptions['underpayTolerance']): ExactDecimal {
  const absolute = tolerance?.absolute ? toDecimal(tolerance.absolute, 'underpayTolerance.absolute') : new ExactDecimal(0);
  const percent = tolerance?.percent ? amount.times(toDecimal(tolerance.percent, 'underpayTolerance.percent')).dividedBy(100) : new ExactDecimal(0);
  return ExactDecimal.max(absolute, percent);
}

/**
 * The outcome of a payment or invoice from its amounts and `expiresAt`, in exact decimals: more
 * than the amount received is overpaid; the amount (less `underpayTolerance`) is paid; less is
 * pending until `expiresAt`, then underpaid, or expired when nothing arrived. Status words only
 * refine it through `statusMap`.
 */
export function classify(resource: Classifiable, options: ClassifyOptions = {}): Classification {
  const now = (options.now ?? new Date()).getTime();
  const amount = toDecimal(resource.amount, 'amount');
  const received = receivedOf(resource);
  const expiresAt = resource.expiresAt ? Date.parse(resource.expiresAt) : undefined;
  const meaning = resource.status ? (options.statusMap ?? DEFAULT_STATUS_MAP)[resource.status] : undefined;
  const pastExpiry = (expiresAt !== undefined && now >= expiresAt) || meaning === 'closed';

  let outcome: Outcome;
  if (received.greaterThan(amount)) outcome = 'overpaid';
  // Some money must have arrived: a tolerance as large as the amount never pays for nothing.
  else if (!received.isZero() && received.greaterThanOrEqualTo(amount.minus(allowance(amount, options.underpayTolerance)))) outcome = 'paid';
  else if (!pastExpiry) outcome = 'pending';
  else outcome = received.isZero() ? 'expired' : 'underpaid';
  if (meaning === 'hold' && (outcome === 'paid' || outcome === 'overpaid')) outcome = 'pending';

  const changedAt = resource.updatedAt ? Date.parse(resource.updatedAt) : now;
  const late = (outcome === 'paid' || outcome === 'overpaid') && expiresAt !== undefined && changedAt > expiresAt;
  const diff = amount.minus(received);
  // Written like the figures they come from: 8.00 received for 7.00 is a surplus of "1.00".
  const figures = [resource.amount, ...(resource.amountReceived !== undefined ? [resource.amountReceived] : paymentFigures(resource))];
  return {
    outcome,
    late,
    amount: resource.amount,
    // As written, like `amount`: a page showing both shows "10.00 of 10.00", not "10 of 10.00".
    amountReceived: resource.amountReceived ?? writtenLike(received, ...figures),
    shortfall: diff.isPositive() && !diff.isZero() ? writtenLike(diff, ...figures) : '0',
    surplus: diff.isNegative() ? writtenLike(diff.negated(), ...figures) : '0',
  };
}

export type { HandlerOutcome } from '../runs/index.js';

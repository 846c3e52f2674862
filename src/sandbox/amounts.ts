import { addAmounts, amountIsZero, compareAmounts, ExactDecimal, maxAmount, subtractAmounts, toDecimal, writtenLike } from '../money/index.js';
import type { Status } from './records.js';

/** `result` written like its operands (`writtenLike`): "10.50" - "0" is "10.50", not "10.5". */
export const scaled = (result: string, ...operands: string[]) => writtenLike(toDecimal(result), ...operands);

/** `amount - received`, never below zero. */
export function remainingOf(amount: string, received: string): string {
  return scaled(maxAmount(subtractAmounts(amount, received), '0'), amount, received);
}

/** `received - amount`, never below zero. */
export function surplusOf(amount: string, received: string): string {
  return scaled(maxAmount(subtractAmounts(received, amount), '0'), amount, received);
}

/** `a + b`, exact, with the scale of the more precise operand. */
export function sumOf(a: string, b: string): string {
  return scaled(addAmounts(a, b), a, b);
}

/** Contract 3e: the status follows from the amounts, and from expiry only while nothing arrived. */
export function statusOf(amount: string, received: string, expired: boolean): Status {
  if (amountIsZero(received)) return expired ? 'EXPIRED' : 'CREATED';
  const order = compareAmounts(received, amount);
  if (order < 0) return 'PARTIALLY_PAID';
  return order === 0 ? 'PAID' : 'OVERPAID';
}

/**
 * `received` as a whole percentage of `amount`, rounded down, at most 100: 100 only once fully paid.
 * Computed on Decimals and never written out as an amount: the exact ratio (10 of 42.10) may have
 * no finite decimal form.
 */
export function percentOf(amount: string, received: string): number {
  const percent = toDecimal(received).times(100).div(toDecimal(amount)).toDecimalPlaces(0, ExactDecimal.ROUND_DOWN);
  return percent.gte(100) ? 100 : percent.toNumber();
}

/** True once `received` covers `amount`. */
export function isFullyPaid(amount: string, received: string): boolean {
  return compareAmounts(received, amount) >= 0;
}

const STEP = '0.000001';

/** Half of `value`, rounded down to 6 decimals (token precision); `value` itself when that is 0. */
export function halfOf(value: string): string {
  const half = toDecimal(value).div(2).toDecimalPlaces(6, 1).toFixed();
  return amountIsZero(half) ? value : scaled(half, value);
}

/** `remaining` plus a tenth of `amount` (at least one unit of 6 decimals): an overpayment. */
export function excessOf(remaining: string, amount: string): string {
  const tenth = toDecimal(amount).div(10).toDecimalPlaces(6, 1).toFixed();
  return sumOf(remaining, amountIsZero(tenth) ? STEP : tenth);
}

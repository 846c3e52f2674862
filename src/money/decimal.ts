import { Decimal } from 'decimal.js';
import { MoneyError } from '../errors/index.js';

/** Most decimal places an amount may carry (token amounts go up to 18, like wei). */
export const MAX_DECIMALS = 18;

/** Most integer digits an amount may carry: far beyond any real amount, and within exact arithmetic. */
export const MAX_INTEGER_DIGITS = 60;
/** Most decimals an amount read from the service may carry (what we send: `MAX_DECIMALS`). */
const MAX_SERVICE_DECIMALS = 100;
/** Most integer digits `toDecimal` takes: accepted amounts and their sums and differences. */
const MAX_PARSED_INTEGER_DIGITS = 80;

// A private Decimal constructor: enough precision for every amount accepted (60 integer digits,
// 100 decimals) and their sums and differences, and no exponent notation when printing.
const D = Decimal.clone({ precision: 200, rounding: Decimal.ROUND_HALF_EVEN, toExpNeg: -300, toExpPos: 300 });

/** The Decimal constructor every amount goes through (200 digits: never rounds an accepted amount). */
export const ExactDecimal = D;
export type ExactDecimal = Decimal;

const AMOUNT = /^(0|[1-9][0-9]*)(\.[0-9]+)?$/;
// Amounts read from the service may carry a sign or leading zeros; be strict only on what we send.
const SERVICE_AMOUNT = /^-?[0-9]+(\.[0-9]+)?$/;

/**
 * Throws `MoneyError` unless `value` is a non-negative decimal string without exponent and with at
 * most 18 decimals. `field` names the value in the message.
 * @example assertAmount('10.50') // ok
 */
export function assertAmount(value: unknown, field = 'amount'): asserts value is string {
  if (typeof value === 'number') {
    throw new MoneyError(
      `${field} must be a decimal string such as "10.50", not the JS number ${String(value)}: numbers lose precision. Pass String(value) only if it is already exact.`,
    );
  }
  if (typeof value !== 'string') {
    throw new MoneyError(`${field} must be a decimal string such as "10.50", got ${value === null ? 'null' : typeof value}.`);
  }
  if (value.trim() === '') throw new MoneyError(`${field} is empty: give a decimal string such as "10.50".`);
  if (value.startsWith('-')) throw new MoneyError(`${field} "${value}" is negative: amounts must be zero or more.`);
  if (/e/i.test(value)) {
    throw new MoneyError(`${field} "${value}" uses exponent notation: write it out in full, e.g. "0.000001".`);
  }
  if (!AMOUNT.test(value)) {
    throw new MoneyError(`${field} "${value}" is not a plain decimal: use digits with an optional "." (e.g. "10.50"), no sign, spaces or separators.`);
  }
  const [integer = '', fraction = ''] = value.split('.');
  if (integer.length > MAX_INTEGER_DIGITS)
    throw new MoneyError(`${field} "${value.slice(0, 80)}…" has ${integer.length} integer digits; at most ${MAX_INTEGER_DIGITS} are allowed.`);
  const decimals = fraction.length;
  if (decimals > MAX_DECIMALS) {
    throw new MoneyError(`${field} "${value}" has ${decimals} decimals; at most ${MAX_DECIMALS} are allowed.`);
  }
}

/** True when `value` passes `assertAmount`. */
export function isAmount(value: unknown): value is string {
  try {
    assertAmount(value);
    return true;
  } catch {
    return false;
  }
}

/** Parse an amount read from the service (or from our own input) into an exact Decimal. */
export function toDecimal(value: string, field = 'amount'): Decimal {
  if (typeof value !== 'string' || !SERVICE_AMOUNT.test(value.trim())) {
    throw new MoneyError(`${field} "${String(value).slice(0, 80)}" is not a decimal string.`);
  }
  const [integer = '', fraction = ''] = value.trim().replace(/^-/, '').split('.');
  // Beyond these the arithmetic could round: refuse rather than decide on a rounded amount.
  if (integer.replace(/^0+(?=.)/, '').length > MAX_PARSED_INTEGER_DIGITS || fraction.length > MAX_SERVICE_DECIMALS) {
    throw new MoneyError(
      `${field} "${value.slice(0, 80)}…" is too long: at most ${MAX_PARSED_INTEGER_DIGITS} integer digits and ${MAX_SERVICE_DECIMALS} decimals.`,
    );
  }
  return new D(value.trim());
}

/** -1, 0 or 1 as `a` is less than, equal to or greater than `b`. "1.50" equals "1.5". */
export function compareAmounts(a: string, b: string): -1 | 0 | 1 {
  return toDecimal(a, 'a').comparedTo(toDecimal(b, 'b')) as -1 | 0 | 1;
}

/** `a + b`, exact, as a decimal string. */
export function addAmounts(a: string, b: string): string {
  return toDecimal(a, 'a').plus(toDecimal(b, 'b')).toFixed();
}

/** `a - b`, exact, as a decimal string (may be negative). */
export function subtractAmounts(a: string, b: string): string {
  return toDecimal(a, 'a').minus(toDecimal(b, 'b')).toFixed();
}

/** Whether the amount is zero, whatever its decimals (`0.00`). */
export function amountIsZero(a: string): boolean {
  return toDecimal(a).isZero();
}

/** The smaller of two amounts, compared exactly. */
export function minAmount(a: string, b: string): string {
  return compareAmounts(a, b) <= 0 ? a : b;
}

/** The larger of two amounts, compared exactly. */
export function maxAmount(a: string, b: string): string {
  return compareAmounts(a, b) >= 0 ? a : b;
}

/** Decimals written in `amount` ("10.50": 2). */
const decimalsOf = (amount: string) => amount.trim().split('.')[1]?.length ?? 0;

/**
 * `value` written with as many decimals as the most precise of `operands` (or its own, if more):
 * "8.00" − "7.00" reads "1.00", as the service writes amounts, not "1". The value is the same.
 */
export function writtenLike(value: ExactDecimal, ...operands: string[]): string {
  return value.toFixed(Math.max(value.decimalPlaces(), ...operands.map(decimalsOf)));
}

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MoneyError } from '../../src/errors/index.js';
import { addAmounts, assertAmount, compareAmounts, isAmount, subtractAmounts } from '../../src/money/index.js';
import { decimalString } from '../support/arbitraries.js';

describe('assertAmount', () => {
  it.each(['0', '10', '10.50', '0.000000000000000001', '123456789012345678901234567890.5'])('accepts %s', (value) => {
    expect(() => assertAmount(value)).not.toThrow();
  });

  it.each([
    [10, /JS number/],
    ['', /empty/],
    ['-5', /negative/],
    ['1e18', /exponent/],
    ['1.0000000000000000001', /19 decimals/],
    [' 1', /not a plain decimal/],
    ['01', /not a plain decimal/],
    ['1.', /not a plain decimal/],
    [null, /got null/],
  ])('refuses %j', (value, message) => {
    expect(() => assertAmount(value)).toThrow(MoneyError);
    expect(() => assertAmount(value)).toThrow(message);
  });
});

describe('exact arithmetic', () => {
  it('has no float error', () => {
    expect(addAmounts('0.1', '0.2')).toBe('0.3');
    expect(subtractAmounts('100', '99.999999999999999999')).toBe('0.000000000000000001');
    expect(compareAmounts('1.50', '1.5')).toBe(0);
    expect(compareAmounts('9007199254740993', '9007199254740992')).toBe(1);
  });

  const amount = decimalString({ maxUnits: 10n ** 30n });

  it('(a + b) - b = a, and compare agrees with bigint arithmetic', () => {
    fc.assert(
      fc.property(amount, amount, (a, b) => {
        expect(isAmount(a)).toBe(true);
        expect(compareAmounts(subtractAmounts(addAmounts(a, b), b), a)).toBe(0);
        const scale = 10n ** 18n;
        const big = (x: string) => {
          const [int, frac = ''] = x.split('.');
          return BigInt(int!) * scale + BigInt(frac.padEnd(18, '0'));
        };
        const expected = big(a) < big(b) ? -1 : big(a) > big(b) ? 1 : 0;
        expect(compareAmounts(a, b)).toBe(expected);
      }),
    );
  });
});

import fc from 'fast-check';

/**
 * Plain decimal strings as money travels ("0", "149.90", "0.000000000000000001"): no sign, no
 * exponent, at most 18 decimals, trailing zeros kept. `maxUnits` bounds the value in units of its
 * last decimal (`units / 10^scale`), so it also bounds the number of digits.
 */
export function decimalString({ maxUnits }: { maxUnits: bigint }): fc.Arbitrary<string> {
  return fc.tuple(fc.bigInt({ min: 0n, max: maxUnits }), fc.integer({ min: 0, max: 18 })).map(([units, scale]) => {
    const digits = units.toString().padStart(scale + 1, '0');
    return scale === 0 ? digits : `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
  });
}

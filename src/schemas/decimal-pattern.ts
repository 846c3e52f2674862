/**
 * A non-negative decimal as the service writes amounts: `10.50`, never `1e3`, `-1` or `.5`.
 * Bounded so that arithmetic on it is exact (see src/money: 60 integer digits, 100 decimals).
 * Its own module without zod, so the store and the CLI's read commands check amounts without loading zod.
 */
export const DECIMAL = /^[0-9]{1,60}(\.[0-9]{1,100})?$/;

/**
 * Money is a decimal string end to end. These helpers validate amounts before they are sent and
 * compare or combine them exactly (decimal.js), never through JS numbers.
 */
export {
  MAX_DECIMALS,
  assertAmount,
  isAmount,
  compareAmounts,
  addAmounts,
  subtractAmounts,
  amountIsZero,
  minAmount,
  maxAmount,
  toDecimal,
  writtenLike,
  ExactDecimal,
} from './decimal.js';

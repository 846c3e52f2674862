import { z } from 'zod';
import { ConfigError } from '../errors/index.js';
import { DEFAULT_STATUS_MAP, type ClassifyOptions, type StatusMeaning } from '../fulfillment/outcome.js';
import { compareAmounts } from '../money/index.js';

/**
 * The outcome rules as configuration: how much less than the amount still counts as paid
 * (`CHECKOUT_UNDERPAY_TOLERANCE`) and what the service's status words mean (`CHECKOUT_STATUS_MAP`): what every command hands the fulfillment engine as its `classify`
 * option, so `serve`, `reconcile` and the return page decide a payment alike.
 */
export type OutcomeRules = Required<Pick<ClassifyOptions, 'statusMap'>> & Pick<ClassifyOptions, 'underpayTolerance'>;

/** Every status meaning, derived from the type so a new one cannot be forgotten here. */
const MEANINGS: Record<StatusMeaning, true> = { closed: true, hold: true };
const MEANING_NAMES = Object.keys(MEANINGS) as [StatusMeaning, ...StatusMeaning[]];

// Plain decimals only (no sign, exponent or separators): they reach classify() as exact strings,
// never JS numbers.
const DECIMAL = /^(0|[1-9][0-9]*)(\.[0-9]{1,18})?$/;

const TolerancePartSchema = z.string().transform((part, ctx) => {
  const isPercent = part.endsWith('%');
  const digits = isPercent ? part.slice(0, -1) : part;
  if (!DECIMAL.test(digits)) {
    ctx.addIssue({
      code: 'custom',
      message: isPercent ? `"${part}" is not a plain decimal followed by %, e.g. 1% or 0.5%` : `"${part}" is not a plain decimal amount, e.g. 0.01`,
    });
    return z.NEVER;
  }
  if (isPercent && compareAmounts(digits, '100') > 0) {
    ctx.addIssue({ code: 'custom', message: `${part} is more than 100%` });
    return z.NEVER;
  }
  return isPercent ? { percent: digits } : { absolute: digits };
});

const ToleranceSchema = z
  .array(TolerancePartSchema)
  .min(1, 'it is empty')
  .max(2, 'it has more than two parts')
  .refine((given) => given.length < 2 || 'absolute' in given[0]! !== 'absolute' in given[1]!, 'give at most one amount and one percent')
  .transform((given) => Object.assign({}, ...given) as NonNullable<OutcomeRules['underpayTolerance']>);

const StatusMapSchema = z
  .array(
    z
      .string()
      .regex(/^[^=\s]+=[^=\s]+$/, 'each entry must be STATUS=meaning')
      .transform((entry) => entry.split('=') as [string, string])
      .pipe(z.tuple([z.string(), z.enum(MEANING_NAMES, { error: `a meaning must be one of ${MEANING_NAMES.join(', ')}` })])),
  )
  .min(1, 'it is empty')
  .refine((entries) => new Set(entries.map(([status]) => status)).size === entries.length, 'a status is mapped twice')
  .transform((entries) => Object.fromEntries(entries) as Record<string, StatusMeaning>);

const parts = (value: string) => value.split(/[\s,]+/).filter(Boolean);
const firstIssue = (error: z.ZodError) => error.issues[0]?.message ?? 'is malformed';

/**
 * `CHECKOUT_UNDERPAY_TOLERANCE`: an absolute shortfall (`0.01`, in the resource's unit), a percent
 * of the amount (`1%`), or both (`0.01,1%`: the larger allowance wins). Unset: none.
 */
export function parseUnderpayTolerance(value: string | undefined): OutcomeRules['underpayTolerance'] {
  if (value === undefined) return undefined;
  const parsed = ToleranceSchema.safeParse(parts(value));
  if (!parsed.success) {
    throw new ConfigError(
      `CHECKOUT_UNDERPAY_TOLERANCE "${value}" is not a tolerance (${firstIssue(parsed.error)}): use an amount like 0.01, a percent like 1%, or both as 0.01,1%.`,
    );
  }
  return parsed.data;
}

/**
 * `CHECKOUT_STATUS_MAP`: `STATUS=meaning` entries separated by commas or spaces, e.g.
 * `EXPIRED=closed,CONFIRMING=hold`. It replaces the default map `EXPIRED=closed` (list that entry
 * too to keep it). Unset: the default.
 */
export function parseStatusMap(value: string | undefined): Record<string, StatusMeaning> {
  if (value === undefined) return { ...DEFAULT_STATUS_MAP };
  const parsed = StatusMapSchema.safeParse(parts(value));
  if (!parsed.success) {
    throw new ConfigError(
      `CHECKOUT_STATUS_MAP "${value}" is not a status map (${firstIssue(parsed.error)}): use STATUS=meaning entries separated by commas, e.g. EXPIRED=closed,CONFIRMING=hold, where a meaning is ${MEANING_NAMES.join(' or ')}.`,
    );
  }
  return parsed.data;
}

/** One line for `doctor`: the rules every command classifies with. */
export function describeOutcomeRules(rules: OutcomeRules): string {
  const { absolute, percent } = rules.underpayTolerance ?? {};
  const tolerance = [absolute, percent === undefined ? undefined : `${percent}%`].filter(Boolean).join(' or ');
  const map = Object.entries(rules.statusMap)
    .map(([status, meaning]) => `${status}=${meaning}`)
    .join(', ');
  return `underpay tolerance ${tolerance ? `${tolerance}${absolute && percent ? ' (the larger wins)' : ''}` : 'none (exact amount)'}; status map ${map || 'empty'}`;
}

import { checkKey } from '../config/keys.js';
import { printable, readBidiEscapes, registerSecret } from '../errors/index.js';
import { UsageError } from './exit.js';

/** Flag parsers shared by several commands. */

/**
 * A value from the command line, quoted for an error line: the CLI prints a message's first line
 * only, so a raw line break in the value would cut off the advice after it.
 */
export const quoted = (value: string): string => `"${printable(value)}"`;

/**
 * The id of something stored (an event, a payment, a run's key, a tenant), as typed or copied from
 * the CLI's own output: that prints bidirectional controls as escapes (`\u202e`), so such an escape
 * reads as the control, as in the console's search box (see `readBidiEscapes`).
 */
export const storedId = (value: string): string => readBidiEscapes(value);

/** An http(s) URL, or a usage error naming the flag. */
export function httpUrl(flag: string, value: string): string {
  if (!URL.canParse(value) || !/^https?:$/.test(new URL(value).protocol)) {
    throw new UsageError(`${flag} takes an http(s) URL such as http://127.0.0.1:3000/webhooks/checkout, got ${quoted(value)}.`);
  }
  return value;
}

/** `--secret`, else the first `CHECKOUT_WEBHOOK_SECRET`; a usage error when neither is set. */
export function signingSecret(flag: string | undefined, configured: readonly string[], standardWebhooks = true): string {
  if (flag !== undefined) {
    registerSecret(flag);
    // Only Standard Webhooks fixes the secret's format (whsec_…); other schemes sign with its bytes.
    if (standardWebhooks) checkKey('webhook-secret', flag, '--secret');
    return flag;
  }
  const [first] = configured;
  if (!first) throw new UsageError('no secret to sign with: pass --secret whsec_… or set CHECKOUT_WEBHOOK_SECRET.');
  return first;
}

const DURATION_UNITS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
type DurationUnit = keyof typeof DURATION_UNITS;

/** Parse `500ms`, `30s`, `10m`, `2h`, `1d`; a bare number is in `bareUnit`. Undefined when malformed. */
export function parseDuration(text: string, bareUnit: DurationUnit = 'ms'): number | undefined {
  const match = /^([0-9]+(?:\.[0-9]+)?)(ms|s|m|h|d)?$/.exec(text.trim());
  if (!match) return undefined;
  return Math.round(Number(match[1]) * DURATION_UNITS[(match[2] ?? bareUnit) as DurationUnit]);
}

/** The longest duration a flag takes (36,500 days): a time that far back or ahead is still a date. */
export const MAX_DURATION_MS = 36_500 * DURATION_UNITS.d;
/** The longest a Node timer waits (about 24.8 days); a longer one fires at once. */
export const MAX_TIMER_MS = 2_147_483_647;

/** A commander parser for a duration flag, in milliseconds, at most `maxMs`; a bare number is in `bareUnit`. */
export function duration(flag: string, bareUnit: DurationUnit = 'ms', maxMs = MAX_DURATION_MS) {
  return (value: string): number => {
    const ms = parseDuration(value, bareUnit);
    if (ms === undefined)
      throw new UsageError(`${flag} takes a duration such as 500ms, 30s, 10m or 2h (a bare number is in ${bareUnit}), got ${quoted(value)}.`);
    if (ms > maxMs) throw new UsageError(`${flag} takes at most ${Math.floor(maxMs / DURATION_UNITS.d)}d, got ${quoted(value)}.`);
    return ms;
  };
}

/**
 * An ISO 8601 time as `--since` takes it: a four-digit year, then optionally month, day, time (`T`
 * or a space) and zone. `Date.parse` alone also reads `5` as May 2001, `-1` or `foo 2020` as a year,
 * and rolls `2020-02-30` over into March.
 */
const ISO_TIME = /^(\d{4})(?:-(\d{2})(?:-(\d{2})(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})?)?)?)?$/i;

/** The time `value` names when it is an ISO time with a real calendar date; NaN otherwise. */
function isoTime(value: string): number {
  const match = ISO_TIME.exec(value.trim());
  if (!match) return Number.NaN;
  const [, year, month = '01', day = '01'] = match;
  const date = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)));
  if (date.getUTCMonth() !== Number(month) - 1 || date.getUTCDate() !== Number(day)) return Number.NaN;
  return Date.parse(value.trim());
}

/**
 * A parser for `--since`: an ISO time, or a duration back from `now()` (`10m`, `2h`, `1d`, its unit
 * required: a bare `2025` is the year, not 2,025 ms); gives the ISO time.
 */
export function sinceTime(flag: string, now: () => number = Date.now) {
  return (value: string): string => {
    const ago = /[a-z]$/i.test(value.trim()) ? parseDuration(value) : undefined;
    if (ago !== undefined) {
      if (ago > MAX_DURATION_MS) throw new UsageError(`${flag} takes at most ${MAX_DURATION_MS / DURATION_UNITS.d}d back, got ${quoted(value)}.`);
      return new Date(now() - ago).toISOString();
    }
    const at = isoTime(value);
    if (Number.isNaN(at))
      throw new UsageError(`${flag} takes an ISO time (2025-01-31T12:00:00Z) or a duration back from now (10m, 2h, 1d), got ${quoted(value)}.`);
    return new Date(at).toISOString();
  };
}

/**
 * A commander parser for an interface to listen on. An empty one is refused: Node reads `''` as
 * every interface, which nobody means by leaving it empty.
 */
export function listenHost(flag: string, options: { loopbackOnly?: boolean } = {}) {
  // The hint names only what the command accepts: the sandbox listens on loopback alone.
  const examples = options.loopbackOnly ? 'a loopback address: 127.0.0.1 or ::1' : '127.0.0.1; 0.0.0.0 or :: for every interface';
  return (value: string): string => {
    if (value.trim() === '') throw new UsageError(`${flag} takes an interface to listen on (${examples}), got ${quoted(value)}.`);
    return value.trim();
  };
}

/**
 * A commander parser for an event type filter. An empty one (a script's unset variable) is refused:
 * it matches no event, so the list would look like a store that holds none.
 */
export function eventType(flag: string) {
  return (value: string): string => {
    if (value.trim() === '') throw new UsageError(`${flag} takes an event type such as payment.paid, got ${quoted(value)}.`);
    return storedId(value.trim());
  };
}

/**
 * A commander parser for a module file. An empty one (a script's unset variable) is refused: it
 * would stand for no flag at all, and the default module would load in its place.
 */
export function moduleFile(flag: string) {
  return (value: string): string => {
    if (value.trim() === '') throw new UsageError(`${flag} takes the fulfillment module's file, such as ./fulfillment.ts, got ${quoted(value)}.`);
    return value;
  };
}

/** A commander parser for a probability flag (0 to 1). */
export function probability(flag: string) {
  return (value: string): number => {
    const p = Number(value);
    if (value.trim() === '' || !(p >= 0 && p <= 1)) throw new UsageError(`${flag} takes a probability between 0 and 1, got ${quoted(value)}.`);
    return p;
  };
}

export interface WholeNumberRange {
  /** @default 0 */
  min?: number;
  /** @default Number.MAX_SAFE_INTEGER */
  max?: number;
  /** What the usage error says the flag takes. @default 'a whole number' with the range */
  expected?: string;
}

function rangeText(min: number, max: number): string {
  if (max < Number.MAX_SAFE_INTEGER) return `a whole number from ${min} to ${max}`;
  return min > 0 ? `a whole number of at least ${min}` : 'a whole number';
}

/**
 * A commander parser for a whole-number flag within `min`..`max`.
 * @example
 * .option('--seed <n>', 'seed of the fault injection', wholeNumber('--seed'))
 * const concurrency = wholeNumber('--concurrency', { min: 1, max: 256 })(options.concurrency); // a flag with a default
 */
export function wholeNumber(flag: string, { min = 0, max = Number.MAX_SAFE_INTEGER, expected = rangeText(min, max) }: WholeNumberRange = {}) {
  return (value: string): number => {
    const n = Number(value);
    if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < min || n > max) throw new UsageError(`${flag} takes ${expected}, got ${quoted(value)}.`);
    return n;
  };
}

/** A commander parser for a port flag (0 to 65535; 0 asks for any free port). */
export const portNumber = (flag: string) => wholeNumber(flag, { max: 65_535, expected: 'a port number (0: any free port)' });

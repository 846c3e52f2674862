import { z } from 'zod';
import { TENANT_ID_PATTERN, TENANT_ID_RULE } from '../domain/tenants.js';
import { DECIMAL } from './decimal-pattern.js';

export { DECIMAL };

/**
 * A UUID as the spec writes ids (8-4-4-4-12 hex digits, any version). One pattern for every id the
 * toolkit reads or sends, and for the sandbox's path parameters.
 */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether two ids name one UUID: the pattern takes either case, so the comparison does too. */
export const sameUuid = (a: string, b: string): boolean => a.toLowerCase() === b.toLowerCase();

/** True when `value` is a string in UUID format. */
export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID_PATTERN.test(value);
}

/** Spec section 2: "identifiers named uuid are strings in UUID format". */
export const Uuid = z.string().regex(UUID_PATTERN, 'expected a UUID such as "0b6f1c2e-3c51-4d0a-9d8e-0d4f6a1b2c3d"');

/**
 * A money amount as the service sends it: a non-negative decimal string (spec section 2). A sign,
 * an exponent or a JSON number is refused: amounts are compared exactly, never guessed at.
 */
export const DecimalString = z.string().regex(DECIMAL, 'expected a non-negative decimal string such as "10.50" (at most 60 integer digits)');

/**
 * A partner platform's tenant id as onboarding, checkout and the CLI take it: without the spaces
 * around it (a form's or a spreadsheet's), so ` shop-42 ` is the tenant `shop-42` everywhere.
 */
export const TenantIdSchema = z.string().trim().regex(TENANT_ID_PATTERN, TENANT_ID_RULE);

/** `test` or `live`: the environment of the key that created a record. */
export const EnvironmentSchema = z.enum(['test', 'live']);
/** `test` or `live`: the environment of the key that created a record. */
export type Environment = z.infer<typeof EnvironmentSchema>;

/** Address families the service knows. Unknown families are kept as plain strings. */
export const FamilySchema = z.union([z.enum(['evm', 'tron']), z.string()]);

/**
 * ISO 8601 date-time with `Z` or a UTC offset, e.g. `2026-11-22T10:00:00Z` (spec section 2). Kept
 * as the service's string; parsed only when compared. `Date.parse` alone would take "Nov 22 2026"
 * or "1", and a time without an offset would be read in the local zone.
 */
export const Timestamp = z.iso.datetime({ offset: true, error: 'expected an ISO 8601 date-time such as "2026-11-22T10:00:00Z"' });

/** Where the buyer is sent: an absolute http(s) URL (spec 2.1 `checkoutUrl`). */
export const HttpUrl = z.url({ protocol: /^https?$/, error: 'expected an absolute http(s) URL' });

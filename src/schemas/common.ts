import { z } from 'zod';

/** A decimal number carried as a string, as the service sends money. */
export const DecimalString = z.string().regex(/^-?[0-9]+(\.[0-9]+)?$/, 'expected a decimal string such as "10.50"');

/** `test` or `live`: the environment of the key that created a record. */
export const EnvironmentSchema = z.enum(['test', 'live']);
export type Environment = z.infer<typeof EnvironmentSchema>;

/** Address families the service knows. Unknown families are kept as plain strings. */
export const FamilySchema = z.union([z.enum(['evm', 'tron']), z.string()]);

/** ISO 8601 timestamp. Kept as the service's string; parsed only when compared. */
export const Timestamp = z.string().refine((v) => !Number.isNaN(Date.parse(v)), 'expected an ISO 8601 date-time');

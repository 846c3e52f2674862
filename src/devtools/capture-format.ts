import { z } from 'zod';

/**
 * One captured delivery as written to `DIR/<time>-<random>.json`. The body is kept as base64 so
 * it stays byte-exact whatever its encoding; `headers` is Node's view (lower-case names, repeated
 * headers joined with ", "), `rawHeaders` the pairs as they arrived.
 */
export const CaptureFileSchema = z.looseObject({
  version: z.literal(1),
  receivedAt: z.string(),
  method: z.string(),
  /** Path with query. */
  url: z.string(),
  headers: z.record(z.string(), z.string()),
  rawHeaders: z.array(z.tuple([z.string(), z.string()])),
  bodyBase64: z.string(),
  bodyBytes: z.number().int().nonnegative(),
  /** Hex SHA-256 of the body, to check the file against edits. */
  bodySha256: z.string(),
});
export type CaptureFile = z.infer<typeof CaptureFileSchema>;

/** A capture read back, with its body decoded. */
export interface CapturedDelivery {
  file: string;
  receivedAt: string;
  method: string;
  url: string;
  headers: Record<string, string>;
  body: Buffer;
}

/** Node's header view of raw pairs: lower-case names, repeated headers joined with ", ". */
export function headerRecord(pairs: ReadonlyArray<readonly [string, string]>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of pairs) {
    const key = name.toLowerCase();
    out[key] = key in out ? `${out[key]}, ${value}` : value;
  }
  return out;
}

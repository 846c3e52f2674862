import { z } from 'zod';
import { WebhookVerificationError } from '../../errors/index.js';
import type { SchemeRules } from './rules.js';
import { defineScheme } from './scheme-entry.js';

const ALGORITHMS = ['sha256', 'sha512'] as const;
const ENCODINGS = ['hex', 'base64'] as const;

const PlainHmacConfig = z.object({
  kind: z.literal('hmac'),
  /** Header carrying the signature (case-insensitive). */
  header: z.string().min(1),
  /** @default 'sha256' */
  algorithm: z.enum(ALGORITHMS).optional(),
  /** @default 'hex' */
  encoding: z.enum(ENCODINGS).optional(),
  /** Text before the digest in the header, e.g. `sha256=`. @default '' */
  prefix: z.string().optional(),
});

/**
 * A plain HMAC of the raw body in a named header (GitHub, Shopify and many others). There is no
 * timestamp, so no replay protection beyond event-id dedupe. The key is the secret's UTF-8 bytes.
 * @example { kind: 'hmac', header: 'x-hub-signature-256', prefix: 'sha256=' }
 */
export type PlainHmacScheme = z.infer<typeof PlainHmacConfig>;

const DIGEST_BYTES = { sha256: 32, sha512: 64 } as const;

/** A digest of `algorithm` in `encoding` at the end of a header value (Node's base64 is padded). */
function digestAtEnd(algorithm: (typeof ALGORITHMS)[number], encoding: (typeof ENCODINGS)[number]): RegExp {
  const bytes = DIGEST_BYTES[algorithm];
  if (encoding === 'hex') return new RegExp(`[0-9a-fA-F]{${bytes * 2}}$`);
  const padding = (3 - (bytes % 3)) % 3;
  return new RegExp(`[A-Za-z0-9+/]{${Math.ceil(bytes / 3) * 4 - padding}}={${padding}}$`);
}

const DIGEST_SHAPES = ALGORITHMS.flatMap((algorithm) => ENCODINGS.map((encoding) => ({ algorithm, encoding, pattern: digestAtEnd(algorithm, encoding) })));

/** A plain HMAC-SHA256/512 of the raw body, hex or base64, in a named header. */
function plainHmacRules(scheme: PlainHmacScheme): SchemeRules {
  const headerName = scheme.header.toLowerCase();
  const algorithm = scheme.algorithm ?? 'sha256';
  const encoding = scheme.encoding ?? 'hex';
  const prefix = scheme.prefix ?? '';
  return {
    algorithm,
    encoding,

    claim({ header }) {
      const value = header(headerName);
      if (value === undefined) throw new WebhookVerificationError('missing_headers', `Missing required header ${headerName}.`);
      if (!value.startsWith(prefix)) {
        throw new WebhookVerificationError('bad_signature', `Invalid ${headerName}: expected it to start with "${prefix}".`);
      }
      const digest = value.slice(prefix.length).trim();
      return {
        delivery: { id: undefined, timestamp: undefined },
        prefix: '',
        signatures: [encoding === 'hex' ? digest.toLowerCase() : digest],
        noMatch: `No matching signature found in ${headerName}: the HMAC-${algorithm.toUpperCase()} must cover the exact raw body bytes and use one of the configured secrets.`,
      };
    },

    signedPrefix: () => '',

    // One header holds one digest: sign with the first (newest) secret.
    headers: ({ digests: [digest] }) => (digest === undefined ? {} : { [headerName]: `${prefix}${digest}` }),
  };
}

export const plainHmac = defineScheme(PlainHmacConfig, {
  text: {
    usage: 'hmac:<header>[:sha256|sha512[:hex|base64[:prefix]]]',
    parse: ([header, algorithm, encoding, ...prefix]) => ({
      header,
      algorithm: algorithm || undefined,
      encoding: encoding || undefined,
      prefix: prefix.length ? prefix.join(':') : undefined,
    }),
  },
  keyForm: 'utf8',
  timestampHeader: () => undefined,
  create: plainHmacRules,
  // Any header ending in something shaped like a digest: what comes before it is the prefix (`sha256=`).
  looksLike: (headers) =>
    Object.entries(headers).flatMap(([header, value]) =>
      DIGEST_SHAPES.filter(({ pattern }) => pattern.test(value)).map(({ algorithm, encoding, pattern }) => {
        const prefix = value.replace(pattern, '');
        return { kind: 'hmac' as const, header, algorithm, encoding, ...(prefix ? { prefix } : {}) };
      }),
    ),
});

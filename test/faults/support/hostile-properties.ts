import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { checkRedirectUrl } from '../../../src/checkout/redirect-guard.js';
import { MoneyError, RedirectRejectedError, WebhookVerificationError } from '../../../src/errors/index.js';
import {
  addAmounts,
  amountIsZero,
  assertAmount,
  compareAmounts,
  isAmount,
  maxAmount,
  minAmount,
  subtractAmounts,
  toDecimal,
} from '../../../src/money/index.js';
import { parseDelivery } from '../../../src/webhooks/receive/parse-delivery.js';
import type { WebhookScheme } from '../../../src/webhooks/schemes/scheme.js';
import { createVerifier, signWebhook } from '../../../src/webhooks/index.js';

/**
 * Hostile-input properties of the library functions `serve` runs on every request: the webhook
 * verifier, the envelope parser, the amount parser and the redirect guard. One implementation, two
 * sizes: `test/faults/hostile-input.test.ts` runs each with 100,000 cases (FAULTS_PROPERTY_RUNS),
 * `test/webhooks/hostile-properties.test.ts` with about 1,000 inside `npm test`.
 *
 * Each check throws (fast-check prints the seed and the shrunk counterexample) or returns counts,
 * so the faults run can report what the cases actually exercised.
 */

// ---------------------------------------------------------------------------------------------
// Secrets and independent reference computations (node:crypto directly, never src/webhooks).

/** Two Standard Webhooks secrets (a rotation) and the key bytes behind them. */
export const HOSTILE_SECRETS = ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'whsec_aG9zdGlsZS1pbnB1dC1zZWNyZXQtdHdv'] as const;
const KEYS = HOSTILE_SECRETS.map((secret) => Buffer.from(secret.slice('whsec_'.length), 'base64'));
/** A secret the verifier does not know. */
const STRANGER = 'whsec_c3RyYW5nZXItc2VjcmV0LW5vdC1jb25maWd1cmVk';
const TOLERANCE = 300;

function referenceSignature(key: Buffer, id: string, timestamp: string, body: Buffer | string): string {
  return createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest('base64');
}

type HeaderRecord = Record<string, string | string[] | undefined>;

/** A header value as any framework could hand it over: record (any casing, arrays) or `Headers`. */
function headerValue(headers: HeaderRecord, name: string): string | undefined {
  const flatten = (value: string | string[]) => {
    const text = Array.isArray(value) ? value.join(', ') : value;
    return text === '' ? undefined : text;
  };
  // As a framework hands them over: the lower-case name first, then any other casing.
  const direct = Object.hasOwn(headers, name) ? headers[name] : undefined;
  if (direct !== undefined) return flatten(direct);
  for (const [key, value] of Object.entries(headers)) if (key.toLowerCase() === name && value !== undefined) return flatten(value);
  return undefined;
}

function toBuffer(body: unknown): Buffer | string | undefined {
  if (typeof body === 'string' || Buffer.isBuffer(body)) return body;
  if (body instanceof Uint8Array) return Buffer.from(body);
  if (body === undefined || body === null) return Buffer.alloc(0);
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// 1. The verifier on random and near-valid deliveries: only WebhookVerificationError, and nothing
//    verifies unless the header carries the exact HMAC of <id>.<timestamp>.<body> with a known key.

const NOW_S = 1_800_000_000;

const printable = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 60 });
const anyText = fc.oneof(fc.string({ maxLength: 60 }), fc.string({ unit: 'binary', maxLength: 60 }), printable, fc.constant(''));
const idArb = fc.oneof(
  { arbitrary: fc.string({ unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789_-.'.split('')), minLength: 1, maxLength: 30 }), weight: 4 },
  { arbitrary: anyText, weight: 1 },
);
const timestampArb = fc.oneof(
  { arbitrary: fc.integer({ min: -400, max: 400 }).map((skew) => String(NOW_S + skew)), weight: 6 },
  {
    arbitrary: fc.constantFrom(
      '',
      ' ',
      '-1',
      '0',
      '1e9',
      '1800000000.5',
      ' 1800000000',
      '1800000000 ',
      '0x6b49d200',
      '١٨٠٠٠٠٠٠٠٠',
      '9'.repeat(15),
      '9'.repeat(16),
      '9'.repeat(400),
      '00000001800000000',
      'NaN',
      'Infinity',
    ),
    weight: 2,
  },
  { arbitrary: anyText, weight: 1 },
);
const bodyArb: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)), weight: 4 },
  { arbitrary: fc.uint8Array({ maxLength: 200 }), weight: 1 },
  { arbitrary: fc.string({ maxLength: 200 }), weight: 2 },
  { arbitrary: fc.json({ maxDepth: 3 }), weight: 2 },
  { arbitrary: fc.constantFrom<unknown>(undefined, null, 0, 1, true, {}, [], { id: 'evt' }, ['a'], () => 1, Symbol('s'), 10n), weight: 1 },
);

interface GarbageDelivery {
  id: string | undefined;
  timestamp: string | undefined;
  body: unknown;
  signature: string | string[] | undefined;
  names: 'lower' | 'upper' | 'mixed';
  form: 'record' | 'headers';
  extra: Record<string, string>;
}

/** A signature header: random, or built from real signatures of this or another delivery. */
function signatureArb(): fc.Arbitrary<(id: string, ts: string, body: unknown) => string | string[] | undefined> {
  const entry = fc.oneof(
    fc.constant((id: string, ts: string, body: unknown) => {
      const raw = toBuffer(body);
      return raw === undefined ? 'v1,x' : `v1,${referenceSignature(KEYS[0]!, id, ts, raw)}`;
    }),
    fc.constant((id: string, ts: string, body: unknown) => {
      const raw = toBuffer(body);
      return raw === undefined ? 'v1,x' : `v1,${referenceSignature(KEYS[1]!, id, ts, raw)}`;
    }),
    fc.constant((id: string, ts: string, body: unknown) => {
      const raw = toBuffer(body);
      return raw === undefined ? 'v1,x' : `v1,${referenceSignature(Buffer.from(STRANGER.slice(6), 'base64'), id, ts, raw)}`;
    }),
    // A valid signature of something close: another body, id or timestamp.
    fc.constant((id: string, ts: string) => `v1,${referenceSignature(KEYS[0]!, id, ts, 'other body')}`),
    fc.constant((id: string, ts: string, body: unknown) => {
      const raw = toBuffer(body);
      return raw === undefined ? 'v1,' : `v1,${referenceSignature(KEYS[0]!, `${id}x`, ts, raw)}`;
    }),
    fc.constant((id: string, ts: string, body: unknown) => {
      const raw = toBuffer(body);
      return raw === undefined ? 'v1,' : `v2,${referenceSignature(KEYS[0]!, id, ts, raw)}`;
    }),
    fc
      .oneof(
        anyText,
        fc.base64String({ maxLength: 60 }).map((b) => `v1,${b}`),
      )
      .map((text) => () => text),
    fc.constantFrom('v1,', 'v1', ',', ' ', 'v1,=', 'v1,' + 'A'.repeat(43) + '=', 'v1,' + 'A'.repeat(10_000)).map((text) => () => text),
  );
  return fc.oneof(
    { arbitrary: fc.constant(() => undefined), weight: 1 },
    {
      arbitrary: fc
        .array(entry, { minLength: 1, maxLength: 4 })
        .chain((entries) =>
          fc.constantFrom(' ', ', ', ',', '  ').map((sep) => (id: string, ts: string, body: unknown) => entries.map((make) => make(id, ts, body)).join(sep)),
        ),
      weight: 6,
    },
    {
      arbitrary: fc
        .array(entry, { minLength: 1, maxLength: 3 })
        .map((entries) => (id: string, ts: string, body: unknown) => entries.map((make) => make(id, ts, body) ?? '')),
      weight: 1,
    },
  );
}

const garbageDelivery: fc.Arbitrary<GarbageDelivery> = fc
  .record({
    id: fc.option(idArb, { nil: undefined, freq: 8 }),
    timestamp: fc.option(timestampArb, { nil: undefined, freq: 8 }),
    body: bodyArb,
    sign: signatureArb(),
    names: fc.constantFrom<'lower' | 'upper' | 'mixed'>('lower', 'lower', 'upper', 'mixed'),
    form: fc.constantFrom<'record' | 'headers'>('record', 'record', 'record', 'headers'),
    extra: fc.dictionary(
      fc.constantFrom('content-type', 'x-forwarded-for', 'webhook-id ', 'Webhook-Signature', 'constructor', '__proto__', 'toString'),
      printable,
      { maxKeys: 3 },
    ),
  })
  .map(({ sign, ...rest }) => ({ ...rest, signature: sign(rest.id ?? '', rest.timestamp ?? '', rest.body) }));

function caseName(name: string, how: GarbageDelivery['names']): string {
  if (how === 'upper') return name.toUpperCase();
  if (how === 'mixed') return name.replace(/(^|-)([a-z])/g, (_m, dash: string, c: string) => dash + c.toUpperCase());
  return name;
}

function asHeaderBag(delivery: GarbageDelivery): { bag: HeaderRecord | Headers; record: HeaderRecord } {
  const record: HeaderRecord = {};
  for (const [name, value] of Object.entries(delivery.extra)) record[name] = value;
  const set = (name: string, value: string | string[] | undefined) => {
    if (value !== undefined) record[caseName(name, delivery.names)] = value;
  };
  set('webhook-id', delivery.id);
  set('webhook-timestamp', delivery.timestamp);
  set('webhook-signature', delivery.signature);
  if (delivery.form === 'record') return { bag: record, record };
  // Headers only takes valid header names and values (what Node's HTTP parser lets through);
  // anything else is tried as a record.
  try {
    const headers = new Headers();
    for (const [name, value] of Object.entries(record)) {
      if (value === undefined) continue;
      for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
    }
    const normalised: HeaderRecord = {};
    headers.forEach((value, name) => (normalised[name] = value));
    return { bag: headers, record: normalised };
  } catch {
    return { bag: record, record };
  }
}

export interface VerifierGarbageStats {
  runs: number;
  verified: number;
  refused: Record<string, number>;
}

/** Random and near-valid deliveries: only WebhookVerificationError, never a false acceptance. */
export function checkVerifierOnGarbage(numRuns: number, seed?: number): VerifierGarbageStats {
  const verify = createVerifier({ secrets: [...HOSTILE_SECRETS] });
  const stats: VerifierGarbageStats = { runs: 0, verified: 0, refused: {} };
  fc.assert(
    fc.property(garbageDelivery, (delivery) => {
      const headers = asHeaderBag(delivery);
      stats.runs += 1;
      let result: { id: string | undefined; timestamp: number | undefined };
      try {
        result = verify({ headers: headers.bag, body: delivery.body, now: NOW_S * 1000 });
      } catch (error) {
        if (!(error instanceof WebhookVerificationError)) throw new Error(`verifier threw ${String(error)} (not a WebhookVerificationError)`, { cause: error });
        stats.refused[error.reason] = (stats.refused[error.reason] ?? 0) + 1;
        return;
      }
      // Verified: it must be a genuine signature, made with a configured key over these exact bytes.
      stats.verified += 1;
      const id = headerValue(headers.record, 'webhook-id');
      const ts = headerValue(headers.record, 'webhook-timestamp');
      const signature = headerValue(headers.record, 'webhook-signature');
      const raw = toBuffer(delivery.body);
      if (id === undefined || ts === undefined || signature === undefined || raw === undefined)
        throw new Error('verified without id, timestamp, signature or a raw body');
      if (result.id !== id) throw new Error(`verified id ${String(result.id)} is not the header's ${id}`);
      if (!/^[0-9]{1,15}$/.test(ts) || Math.abs(Number(ts) - NOW_S) > TOLERANCE) throw new Error(`verified a timestamp outside the tolerance: ${ts}`);
      const genuine = KEYS.some((key) => signature.split(/[ ,]+/).includes(referenceSignature(key, id, ts, raw)));
      if (!genuine) throw new Error(`verified without a genuine signature: ${signature}`);
    }),
    { numRuns, seed },
  );
  return stats;
}

// ---------------------------------------------------------------------------------------------
// 2. Tampering: flip any byte of a validly signed body, id, timestamp or signature → refused.

type Part = 'body' | 'id' | 'timestamp' | 'signature';

const SCHEMES: Array<{ name: string; scheme: WebhookScheme; secret: string }> = [
  { name: 'standard-webhooks', scheme: { kind: 'standard-webhooks' }, secret: HOSTILE_SECRETS[0] },
  { name: 'stripe-style', scheme: { kind: 'stripe-style' }, secret: 'stripe-style-secret-0123456789' },
  { name: 'hmac-sha512-base64', scheme: { kind: 'hmac', header: 'x-signature', algorithm: 'sha512', encoding: 'base64' }, secret: 'plain-secret-0123456789' },
  { name: 'hmac-sha256-hex', scheme: { kind: 'hmac', header: 'x-hub-signature-256', prefix: 'sha256=' }, secret: 'plain-secret-0123456789' },
];

/** Flip one byte (XOR `mask`) of `text`'s latin1 bytes. */
function flipText(text: string, index: number, mask: number): string {
  const bytes = Buffer.from(text, 'latin1');
  bytes[index % bytes.length]! ^= mask;
  return bytes.toString('latin1');
}

/** A hex digit whose case changed: the same signature value, not a tampered one. */
function isHexCaseFlip(before: string, after: string, index: number): boolean {
  const i = index % before.length;
  const a = before[i]!;
  const b = after[i]!;
  return a !== b && a.toLowerCase() === b.toLowerCase() && /[a-f]/i.test(a);
}

export interface TamperStats {
  runs: number;
  byPart: Record<Part, number>;
  byScheme: Record<string, number>;
  refused: Record<string, number>;
}

export function checkTamperedRefused(numRuns: number, seed?: number): TamperStats {
  const verifiers = SCHEMES.map(({ scheme, secret }) =>
    // The standard verifier also knows the rotation partner: a delivery signed by one key must not verify via the other.
    createVerifier({ secrets: scheme.kind === 'standard-webhooks' ? [...HOSTILE_SECRETS] : [secret], scheme }),
  );
  const stats: TamperStats = { runs: 0, byPart: { body: 0, id: 0, timestamp: 0, signature: 0 }, byScheme: {}, refused: {} };
  fc.assert(
    fc.property(
      fc.nat({ max: SCHEMES.length - 1 }),
      idArb.filter((id) => id.length > 0),
      fc.integer({ min: -TOLERANCE, max: TOLERANCE }),
      fc.uint8Array({ minLength: 1, maxLength: 300 }),
      fc.constantFrom<Part>('body', 'id', 'timestamp', 'signature'),
      fc.nat(),
      fc.integer({ min: 1, max: 255 }),
      fc.boolean(),
      (schemeIndex, id, skew, bytes, wanted, index, mask, bodyAsString) => {
        const { name, scheme, secret } = SCHEMES[schemeIndex]!;
        const verify = verifiers[schemeIndex]!;
        const body = bodyAsString ? Buffer.from(bytes).toString('latin1') : Buffer.from(bytes);
        const timestamp = NOW_S + skew;
        const headers = signWebhook({ id, timestamp, body, secret, scheme });
        const now = NOW_S * 1000;
        verify({ headers, body, now }); // the untouched delivery verifies (throws otherwise)

        // Schemes without an id or timestamp header: tamper with what they sign.
        const signatureHeader = Object.keys(headers).find((h) => h !== 'webhook-id' && h !== 'webhook-timestamp')!;
        let part = wanted;
        if (scheme.kind !== 'standard-webhooks' && (part === 'id' || part === 'timestamp')) part = part === 'id' ? 'body' : 'signature';
        let tamperedHeaders: Record<string, string> = headers;
        let tamperedBody: Buffer | string = body;
        if (part === 'body') {
          if (typeof body === 'string') tamperedBody = flipText(body, index, mask);
          else {
            tamperedBody = Buffer.from(body);
            tamperedBody[index % body.length]! ^= mask;
          }
        } else {
          const header = part === 'id' ? 'webhook-id' : part === 'timestamp' ? 'webhook-timestamp' : signatureHeader;
          const before = headers[header]!;
          let after = flipText(before, index, mask);
          // Hex is case-insensitive: 'a' → 'A' is the same signature (stripe-style and hex HMAC),
          // so flip another bit of that byte instead.
          if (part === 'signature' && scheme.kind !== 'standard-webhooks' && isHexCaseFlip(before, after, index)) after = flipText(before, index, 0x01);
          tamperedHeaders = { ...headers, [header]: after };
        }
        stats.runs += 1;
        stats.byPart[part] += 1;
        stats.byScheme[name] = (stats.byScheme[name] ?? 0) + 1;
        try {
          verify({ headers: tamperedHeaders, body: tamperedBody, now });
        } catch (error) {
          if (!(error instanceof WebhookVerificationError)) throw error;
          stats.refused[error.reason] = (stats.refused[error.reason] ?? 0) + 1;
          return;
        }
        throw new Error(`${name}: a delivery with a flipped ${part} byte (index ${index}, mask ${mask}) verified`);
      },
    ),
    { numRuns, seed },
  );
  return stats;
}

// ---------------------------------------------------------------------------------------------
// 3. The envelope parser: never throws, keeps unknown fields, never pollutes a prototype.

const TRICKY_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__', 'then', 'id', 'type', 'data', ''];
const validTimestamp = fc.constantFrom('2026-11-22T10:00:00Z', '2026-11-22T10:00:00.123+02:00', '2026-01-01T00:00:00-05:30');
const jsonish = fc.jsonValue({ maxDepth: 3 });
const paymentLike = fc.record(
  {
    id: fc.oneof(fc.uuid(), fc.string()),
    status: fc.oneof(fc.constantFrom('CREATED', 'PAID', 'WHATEVER'), fc.string()),
    environment: fc.constantFrom('test', 'live', 'prod'),
    amount: fc.oneof(fc.constantFrom('10.00', '0', '1e3', '-1', ''), fc.string()),
    amountReceived: fc.constantFrom('0', '10', '10.000000000000000001'),
  },
  { requiredKeys: ['id', 'status', 'environment', 'amount'] },
);
/** A valid Payment (spec 2.1) with unknown fields of its own. */
const validPayment = fc
  .record({
    id: fc.uuid(),
    status: fc.constantFrom('CREATED', 'PARTIALLY_PAID', 'PAID', 'SOMETHING_NEW'),
    environment: fc.constantFrom('test', 'live'),
    amount: decimalArb(6),
    amountReceived: decimalArb(6),
    expiresAt: validTimestamp,
  })
  .chain((payment) =>
    fc.dictionary(fc.oneof(fc.constantFrom(...TRICKY_KEYS), fc.string({ maxLength: 12 })), jsonish, { maxKeys: 3 }).map((extra) => {
      for (const [key, value] of Object.entries(extra))
        if (!Object.hasOwn(payment, key) && key !== '__proto__')
          Object.defineProperty(payment, key, { value, enumerable: true, writable: true, configurable: true });
      return payment;
    }),
  );
const mostlyValid = <T>(valid: fc.Arbitrary<T>, other: fc.Arbitrary<unknown>) => fc.oneof({ arbitrary: valid, weight: 8 }, { arbitrary: other, weight: 1 });
const envelopeObject = fc
  .record(
    {
      id: mostlyValid(fc.string({ minLength: 1, maxLength: 40 }), fc.oneof(jsonish, fc.string({ minLength: 256, maxLength: 300 }), fc.constant(''))),
      type: mostlyValid(
        fc.constantFrom('payment.paid', 'payment.created', 'invoice.expired', 'refund.created', 'ping', 'payment.', 'payment', 'PAYMENT.PAID'),
        fc.oneof(fc.string({ maxLength: 30 }), jsonish),
      ),
      createdAt: mostlyValid(validTimestamp, fc.oneof(fc.string(), jsonish, fc.constantFrom('2026-11-22T10:00:00', 'Nov 22 2026', '1'))),
      environment: mostlyValid(fc.constantFrom('test', 'live'), jsonish),
      data: fc.oneof(
        { arbitrary: validPayment, weight: 6 },
        { arbitrary: paymentLike, weight: 1 },
        { arbitrary: jsonish, weight: 2 },
        { arbitrary: fc.constant(null), weight: 1 },
      ),
    },
    { requiredKeys: ['id', 'type', 'createdAt', 'data'] },
  )
  .chain((envelope) =>
    fc.dictionary(fc.oneof(fc.constantFrom(...TRICKY_KEYS), fc.string({ maxLength: 12 })), jsonish, { maxKeys: 5 }).map((extra) => ({ envelope, extra })),
  )
  .map(({ envelope, extra }) => {
    // Text assembled by hand so that "__proto__" really is a key of the JSON, as an attacker sends it.
    const members = [...Object.entries(envelope), ...Object.entries(extra).filter(([key]) => !Object.hasOwn(envelope, key))];
    return `{${members.map(([key, value]) => `${JSON.stringify(key)}:${JSON.stringify(value ?? null)}`).join(',')}}`;
  });
const DEEP = 1_500;
const envelopeText = fc.oneof(
  { arbitrary: envelopeObject, weight: 6 },
  { arbitrary: fc.json({ maxDepth: 4 }), weight: 2 },
  { arbitrary: fc.string({ maxLength: 100 }), weight: 1 },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 100 }), weight: 1 },
  { arbitrary: envelopeObject.map((text) => text.slice(0, Math.max(0, text.length - 1))), weight: 1 },
  {
    arbitrary: fc.constantFrom(
      '',
      'null',
      '[]',
      '"x"',
      '{"__proto__":{"polluted":true}}',
      '{"constructor":{"prototype":{"polluted":true}}}',
      '['.repeat(DEEP),
      '['.repeat(DEEP) + ']'.repeat(DEEP),
      '{"a":'.repeat(DEEP) + '1' + '}'.repeat(DEEP),
      `{"id":"e","type":"ping","createdAt":"2026-11-22T10:00:00Z","data":${'['.repeat(DEEP)}${']'.repeat(DEEP)}}`,
      '\uFEFF{"id":"e"}',
      '{"id":"e","id":"f","type":"ping","createdAt":"2026-11-22T10:00:00Z","data":1}',
    ),
    weight: 1,
  },
);

export interface EnvelopeStats {
  runs: number;
  ok: number;
  invalidJson: number;
  invalidEvent: number;
  unknownFieldsChecked: number;
}

function deepEqualJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

export function checkEnvelopeParser(numRuns: number, seed?: number): EnvelopeStats {
  const stats: EnvelopeStats = { runs: 0, ok: 0, invalidJson: 0, invalidEvent: 0, unknownFieldsChecked: 0 };
  fc.assert(
    fc.property(envelopeText, (text) => {
      stats.runs += 1;
      const result = parseDelivery(text); // must not throw
      const probe = {} as Record<string, unknown>;
      if (probe.polluted !== undefined || (Object.prototype as Record<string, unknown>).polluted !== undefined)
        throw new Error('Object.prototype was polluted');
      let json: unknown;
      let parses = true;
      try {
        json = JSON.parse(text);
      } catch {
        parses = false;
      }
      if (!result.ok) {
        if (result.code === 'invalid_json') {
          stats.invalidJson += 1;
          if (parses) throw new Error(`invalid_json for text that JSON.parse reads: ${text.slice(0, 80)}`);
        } else {
          stats.invalidEvent += 1;
          if (!parses) throw new Error('invalid_event for text that is not JSON');
        }
        if (typeof result.message !== 'string') throw new Error('no message');
        return;
      }
      stats.ok += 1;
      if (!parses || typeof json !== 'object' || json === null || Array.isArray(json)) throw new Error('accepted a non-object');
      const event = result.event as Record<string, unknown>;
      const proto = Object.getPrototypeOf(event);
      if (proto !== Object.prototype && proto !== null) throw new Error('the parsed event has an attacker-chosen prototype');
      const input = json as Record<string, unknown>;
      for (const key of Object.keys(input)) {
        // JSON.parse makes "__proto__" an own key; the parser drops it (never makes it the prototype).
        if (key === '__proto__') {
          if (Object.prototype.hasOwnProperty.call(event, '__proto__') && !deepEqualJson(event[key], input[key]))
            throw new Error('__proto__ kept with another value');
          continue;
        }
        if (key === 'data') continue;
        if (!Object.prototype.hasOwnProperty.call(event, key)) throw new Error(`field ${JSON.stringify(key)} was dropped`);
        if (!deepEqualJson(event[key], input[key])) throw new Error(`field ${JSON.stringify(key)} changed`);
        stats.unknownFieldsChecked += 1;
      }
      // data: kept as given (unknown fields of a payment/invoice too).
      const data = input.data as Record<string, unknown> | null | undefined;
      if (data && typeof data === 'object' && !Array.isArray(data)) {
        for (const key of Object.keys(data)) {
          if (key === '__proto__') continue;
          if (!deepEqualJson((event.data as Record<string, unknown>)[key], data[key])) throw new Error(`data.${key} changed or dropped`);
        }
      } else if (!deepEqualJson(event.data, input.data)) throw new Error('data changed');
    }),
    { numRuns, seed },
  );
  return stats;
}

// ---------------------------------------------------------------------------------------------
// 4. Amounts: arbitrary strings never crash (MoneyError only), and arithmetic is exact.

const SCALE = 18n;
/** A plain decimal string as value × 10^-18 (BigInt), independently of decimal.js. */
function toUnits(text: string): bigint {
  const negative = text.startsWith('-');
  const [whole, fraction = ''] = (negative ? text.slice(1) : text).split('.');
  const units = BigInt(whole!) * 10n ** SCALE + BigInt((fraction + '0'.repeat(Number(SCALE))).slice(0, Number(SCALE)) || '0');
  return negative ? -units : units;
}
function unitsEqual(text: string, units: bigint): boolean {
  return /^-?[0-9]+(\.[0-9]+)?$/.test(text) && toUnits(text) === units;
}

/** A decimal string with up to `maxIntegerDigits` integer digits and up to 18 decimals (service forms too). */
export function decimalArb(maxIntegerDigits: number): fc.Arbitrary<string> {
  const digits = (min: number, max: number) => fc.string({ unit: fc.constantFrom(...'0123456789'.split('')), minLength: min, maxLength: max });
  return fc
    .tuple(
      fc.oneof(
        fc.constant('0'),
        digits(1, maxIntegerDigits).map((d) => d.replace(/^0+(?=.)/, '')),
        fc.constantFrom('9'.repeat(maxIntegerDigits), '1' + '0'.repeat(maxIntegerDigits - 1)),
      ),
      // The service may send leading zeros (toDecimal reads them; assertAmount refuses them on the way out).
      fc.constantFrom('', '', '', '', '', '00'),
      fc.oneof(fc.constant(''), digits(1, 18), fc.constantFrom('9'.repeat(18), '0'.repeat(17) + '1', '5')),
      fc.constantFrom('', '', '', '00'),
    )
    .map(([whole, lead, fraction, zeros]) => `${lead}${whole}${fraction ? `.${fraction}${fraction.length <= 16 ? zeros : ''}` : ''}`);
}

// What assertAmount accepts: at most 60 integer digits (so that arithmetic on it is exact) and 18 decimals.
const AMOUNT_GRAMMAR = /^(0|[1-9][0-9]{0,59})(\.[0-9]{1,18})?$/;
const hostileAmountText = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: fc.constantFrom(...'0123456789.-+eE ,_x'.split('')), maxLength: 30 }),
  fc.constantFrom(
    '',
    ' ',
    '-0',
    '-1',
    '+1',
    '1e3',
    '1E-3',
    '.5',
    '5.',
    '00.1',
    '01',
    '0x10',
    '1_000',
    '1,000.00',
    'Infinity',
    'NaN',
    '١٢٣',
    '１２３',
    '1.0000000000000000001',
    '9'.repeat(2_000),
    '0.' + '0'.repeat(2_000) + '1',
    ' 10.50',
    '10.50 ',
    '10.50\n',
    '\u00a010',
  ),
);
const nonString = fc.constantFrom<unknown>(undefined, null, 0, 10.5, NaN, Infinity, -1, true, {}, [], ['1'], { toString: () => '1' }, 10n, Symbol('x'));

export interface AmountStats {
  runs: number;
  accepted: number;
  refused: number;
  arithmetic: number;
}

function onlyMoneyError(run: () => unknown, what: string): 'ok' | 'refused' {
  try {
    run();
    return 'ok';
  } catch (error) {
    if (error instanceof MoneyError) return 'refused';
    throw new Error(`${what} threw ${String(error)}, not a MoneyError`, { cause: error });
  }
}

/** Arbitrary input to every money helper: MoneyError or an answer, never anything else. */
export function checkAmountParser(numRuns: number, seed?: number): AmountStats {
  const stats: AmountStats = { runs: 0, accepted: 0, refused: 0, arithmetic: 0 };
  fc.assert(
    fc.property(
      fc.oneof({ arbitrary: hostileAmountText, weight: 6 }, { arbitrary: decimalArb(30), weight: 2 }, { arbitrary: nonString, weight: 1 }),
      fc.oneof(hostileAmountText, decimalArb(20)),
      (value, other) => {
        stats.runs += 1;
        const verdict = onlyMoneyError(() => assertAmount(value), 'assertAmount');
        if (isAmount(value) !== (verdict === 'ok')) throw new Error('isAmount disagrees with assertAmount');
        const grammar = typeof value === 'string' && AMOUNT_GRAMMAR.test(value);
        if ((verdict === 'ok') !== grammar) throw new Error(`assertAmount ${verdict} for ${JSON.stringify(value)}`);
        if (verdict === 'ok') stats.accepted += 1;
        else stats.refused += 1;
        for (const [name, run] of [
          ['toDecimal', () => toDecimal(value as string)],
          ['compareAmounts', () => compareAmounts(value as string, other)],
          ['addAmounts', () => addAmounts(other, value as string)],
          ['subtractAmounts', () => subtractAmounts(value as string, other)],
          ['amountIsZero', () => amountIsZero(value as string)],
          ['minAmount', () => minAmount(value as string, other)],
          ['maxAmount', () => maxAmount(other, value as string)],
        ] as const) {
          onlyMoneyError(run, name);
        }
      },
    ),
    { numRuns, seed },
  );
  return stats;
}

/** add, subtract and compare agree exactly with BigInt arithmetic in units of 10^-18. */
export function checkAmountArithmetic(numRuns: number, maxIntegerDigits: number, seed?: number): AmountStats {
  const stats: AmountStats = { runs: 0, accepted: 0, refused: 0, arithmetic: 0 };
  fc.assert(
    fc.property(decimalArb(maxIntegerDigits), decimalArb(maxIntegerDigits), (a, b) => {
      stats.runs += 1;
      const ua = toUnits(a);
      const ub = toUnits(b);
      const sum = addAmounts(a, b);
      if (!unitsEqual(sum, ua + ub)) throw new Error(`${a} + ${b} = ${sum}`);
      const difference = subtractAmounts(a, b);
      if (!unitsEqual(difference, ua - ub)) throw new Error(`${a} - ${b} = ${difference}`);
      const expected = ua < ub ? -1 : ua > ub ? 1 : 0;
      if (compareAmounts(a, b) !== expected) throw new Error(`compare ${a} ${b}`);
      if (amountIsZero(a) !== (ua === 0n)) throw new Error(`amountIsZero ${a}`);
      if (toUnits(subtractAmounts(addAmounts(a, b), b)) !== ua) throw new Error(`${a} + ${b} - ${b} is not ${a}`);
      if (toUnits(minAmount(a, b)) !== (ua < ub ? ua : ub) || toUnits(maxAmount(a, b)) !== (ua > ub ? ua : ub)) throw new Error('min/max');
      stats.arithmetic += 1;
    }),
    { numRuns, seed },
  );
  return stats;
}

// ---------------------------------------------------------------------------------------------
// 5. The redirect guard: nothing off the allow-list ever passes.

const ALLOWED = 'pay.example.com';
const LOOPBACK_ALLOWED = '127.0.0.1:4010';

const schemes = fc.constantFrom(
  'https://',
  'https://',
  'https://',
  'HTTPS://',
  'http://',
  'https:/',
  'https:',
  'https:\\\\',
  'https:/\\',
  '//',
  '/\\',
  '\\\\',
  'javascript:',
  'javascript://',
  'data:text/html,',
  'ftp://',
  'ws://',
  'wss://',
  'file://',
  'blob:https://',
  'view-source:https://',
  ' https://',
  'https:// ',
  '\thttps://',
  'ht\ttps://',
  'https\u0000://',
  '',
);
const userinfos = fc.constantFrom(
  '',
  '',
  '',
  'user@',
  `${ALLOWED}@`,
  'a:b@',
  ':@',
  '@',
  `${ALLOWED}:443@`,
  '%40@',
  `${ALLOWED}%40`,
  `evil.example%2F@`,
  'user%3Apass@',
  '\\@',
  `${ALLOWED}\\@`,
  `${ALLOWED}#@`,
  `${ALLOWED}?@`,
);
const hosts = fc.constantFrom(
  ALLOWED,
  ALLOWED,
  ALLOWED,
  'PAY.EXAMPLE.COM',
  'Pay.Example.Com',
  `${ALLOWED}.`,
  `${ALLOWED}..`,
  `.${ALLOWED}`,
  'evil.example',
  `${ALLOWED}.evil.example`,
  `evil${ALLOWED}`,
  `evil.${ALLOWED}`,
  `evil.example#${ALLOWED}`,
  `evil.example?${ALLOWED}`,
  `evil.example/${ALLOWED}`,
  'pаy.example.com', // Cyrillic а
  'pay.exаmple.com',
  'xn--py-8kc.example.com',
  'xn--pay.example.com',
  'ｐａｙ．ｅｘａｍｐｌｅ．ｃｏｍ', // full-width: IDNA maps it to the allowed host
  'pay。example。com', // ideographic full stops: the same
  'pay%2eexample%2ecom',
  '%70ay.example.com',
  'pay.example.com%2f.evil.example',
  'pay.example.com%5c.evil.example',
  'pay.example.com%00.evil.example',
  'pay.example.com%252f.evil.example',
  'pay.example.com\\.evil.example',
  'pay.example.com\u200b',
  'pay.example.com\u00ad',
  'pay.example.co\u006d',
  'pay.example.com\u2028',
  '127.0.0.1',
  '0x7f.1',
  '2130706433',
  '[::1]',
  '[::ffff:127.0.0.1]',
  'localhost',
  '',
  ' ',
);
const ports = fc.constantFrom('', '', '', ':443', ':0443', ':8443', ':4010', ':', ':65536', ':-1', ':443@evil.example', ':80', ':x');
const tails = fc.constantFrom(
  '',
  '/',
  '/c/123',
  '/c/123?x=1#top',
  '?next=https://evil.example',
  '#@evil.example',
  '/@evil.example',
  '//evil.example',
  '/\\evil.example',
  '\\evil.example',
  '/%2f%2fevil.example',
  '/%5c%5cevil.example',
  '/..%2f..%2fevil',
  '/%2e%2e/evil',
  '@evil.example',
  '.evil.example',
  ':pw@evil.example',
  '\r\nLocation: https://evil.example',
  '%0d%0aLocation:%20https://evil.example',
  '/\u202eelpmaxe.live',
);
const trickyUrl = fc
  .tuple(schemes, userinfos, hosts, ports, tails, fc.option(fc.string({ maxLength: 8 }), { nil: '', freq: 4 }))
  .map(([scheme, user, host, port, tail, noise]) => `${scheme}${user}${host}${port}${tail}${noise}`);
const redirectInput = fc.oneof(
  { arbitrary: trickyUrl, weight: 8 },
  {
    arbitrary: fc.webUrl({
      withFragments: true,
      withQueryParameters: true,
      authoritySettings: { withUserInfo: true, withPort: true, withIPv4: true, withIPv6: true },
    }),
    weight: 1,
  },
  { arbitrary: fc.webUrl({ withFragments: true, withQueryParameters: true }).map((url) => url.replace(/^(https?:\/\/)[^/?#]+/, `$1${ALLOWED}`)), weight: 1 },
  { arbitrary: fc.string({ maxLength: 40 }), weight: 1 },
  { arbitrary: fc.constantFrom<unknown>(undefined, null, 1, {}, [], new URL(`https://${ALLOWED}/`)), weight: 1 },
);

export interface RedirectStats {
  runs: number;
  allowed: number;
  refused: number;
}

/** What passes must be https (http only to allowed loopback when asked), on an allowed host, without user-info. */
export function checkRedirectGuard(numRuns: number, seed?: number): RedirectStats {
  const stats: RedirectStats = { runs: 0, allowed: 0, refused: 0 };
  const strict = { allowedHosts: [ALLOWED] };
  const loopback = { allowedHosts: [ALLOWED, LOOPBACK_ALLOWED], allowLoopbackHttp: true };
  fc.assert(
    fc.property(redirectInput, fc.boolean(), (raw, withLoopback) => {
      stats.runs += 1;
      const options = withLoopback ? loopback : strict;
      let url: URL;
      try {
        url = checkRedirectUrl(raw, options);
      } catch (error) {
        if (!(error instanceof RedirectRejectedError)) throw new Error(`checkRedirectUrl threw ${String(error)}`, { cause: error });
        stats.refused += 1;
        return;
      }
      stats.allowed += 1;
      if (typeof raw !== 'string') throw new Error(`a ${typeof raw} passed`);
      // What a browser does with the Location header: the WHATWG parser, on the raw text and on href.
      const browser = new URL(raw);
      for (const parsed of [url, browser, new URL(url.href)]) {
        if (!options.allowedHosts.includes(parsed.host)) throw new Error(`${JSON.stringify(raw)} passed with host ${parsed.host}`);
        if (parsed.username || parsed.password) throw new Error(`${JSON.stringify(raw)} passed with user-info`);
        const https = parsed.protocol === 'https:';
        const loopbackHttp = withLoopback && parsed.protocol === 'http:' && parsed.host === LOOPBACK_ALLOWED;
        if (!https && !loopbackHttp) throw new Error(`${JSON.stringify(raw)} passed with scheme ${parsed.protocol}`);
      }
      if (/[\\\s\u0000-\u001f\u007f]/.test(raw)) throw new Error(`${JSON.stringify(raw)} passed with a backslash, space or control character`);
      if (/%2f|%5c/i.test(raw.split(/[?#]/)[0]!)) throw new Error(`${JSON.stringify(raw)} passed with an encoded slash`);
      if (/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*@/i.test(raw)) throw new Error(`${JSON.stringify(raw)} passed with an @ in the authority`);
    }),
    { numRuns, seed },
  );
  return stats;
}

/** Plain https URLs on the allowed host always pass (so the guard is not vacuously safe). */
export function checkRedirectAcceptsPlain(numRuns: number, seed?: number): number {
  const segment = fc.string({ unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789-_~'.split('')), minLength: 1, maxLength: 12 });
  let runs = 0;
  fc.assert(
    fc.property(fc.array(segment, { maxLength: 4 }), fc.option(segment, { nil: undefined }), fc.constantFrom('', ':443'), (path, query, port) => {
      runs += 1;
      const raw = `https://${ALLOWED}${port}/${path.join('/')}${query ? `?q=${query}` : ''}`;
      const url = checkRedirectUrl(raw, { allowedHosts: [ALLOWED] });
      if (url.host !== ALLOWED) throw new Error(raw);
    }),
    { numRuns, seed },
  );
  return runs;
}

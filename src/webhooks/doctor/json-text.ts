import { EventEnvelopeSchema } from '../../schemas/event.js';
import { InvoiceAddressSchema, InvoiceSchema, InvoiceTokenSchema } from '../../schemas/invoice.js';
import { PaymentDepositAddressSchema, PaymentSchema } from '../../schemas/payment.js';

/** JSON text without whitespace outside strings; string literals (and their escapes) kept as written. */
export function minifyJson(text: string): string {
  let out = '';
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    if (inString) {
      out += char;
      if (char === '\\') out += text[++i] ?? '';
      else if (char === '"') inString = false;
    } else if (char === '"') {
      inString = true;
      out += char;
    } else if (char !== ' ' && char !== '\n' && char !== '\r' && char !== '\t') {
      out += char;
    }
  }
  return out;
}

/** Non-ASCII characters as `\uXXXX` escapes, as Python's `json.dumps` and others write them. */
export function escapeNonAscii(text: string): string {
  return text.replace(/[\u0080-\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** How many `\uXXXX` escapes of non-ASCII characters the text has. */
export function nonAsciiEscapes(text: string): number {
  let count = 0;
  text.replace(/\\\\|\\u([0-9a-fA-F]{4})/g, (match, hex: string | undefined) => {
    if (hex !== undefined && parseInt(hex, 16) >= 0x80) count += 1;
    return match;
  });
  return count;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** `text` parsed, or undefined when it is not JSON. */
export function parseJson(text: string): Json | undefined {
  try {
    return JSON.parse(text) as Json;
  } catch {
    return undefined;
  }
}

/** A JSON object (not null, not an array). */
export function isObject(value: Json): value is { [key: string]: Json } {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Every key of the document, depth first, in the order they are written. */
export function keySequence(value: Json): string[] {
  if (Array.isArray(value)) return value.flatMap(keySequence);
  if (!isObject(value)) return [];
  return Object.entries(value).flatMap(([key, child]) => [key, ...keySequence(child)]);
}

/** True when every object with several keys lists them alphabetically (what key-sorting serialisers write). */
export function keysSorted(value: Json): boolean {
  if (Array.isArray(value)) return value.every(keysSorted);
  if (!isObject(value)) return true;
  const keys = Object.keys(value);
  return keys.every((key, i) => i === 0 || keys[i - 1]! <= key) && Object.values(value).every(keysSorted);
}

/** Documented key order of each known object, from the zod schemas (the single source of the shapes). */
const ORDER = {
  envelope: Object.keys(EventEnvelopeSchema.shape),
  payment: Object.keys(PaymentSchema.shape),
  paymentAddress: Object.keys(PaymentDepositAddressSchema.shape),
  invoice: [...Object.keys(InvoiceSchema.shape), 'payments', 'settlements'],
  invoiceAddress: Object.keys(InvoiceAddressSchema.shape),
  invoiceToken: Object.keys(InvoiceTokenSchema.shape),
};

function ordered(value: Json, order: readonly string[], children: Record<string, (child: Json) => Json> = {}): Json {
  if (!isObject(value)) return value;
  const out: { [key: string]: Json } = {};
  const keys = [...order.filter((key) => key in value), ...Object.keys(value).filter((key) => !order.includes(key))];
  for (const key of keys) out[key] = children[key] ? children[key](value[key]!) : value[key]!;
  return out;
}

const each = (item: (child: Json) => Json) => (list: Json) => (Array.isArray(list) ? list.map(item) : list);
const paymentAddress = (value: Json) => ordered(value, ORDER.paymentAddress);
const invoiceAddress = (value: Json) => ordered(value, ORDER.invoiceAddress, { tokens: each((token) => ordered(token, ORDER.invoiceToken)) });

/**
 * The event with its keys in the documented order (the envelope's, then the Payment's or
 * Invoice's), unknown keys after the known ones in their received order. Undoes a serialiser that
 * sorted or shuffled keys, when the service writes them in the documented order.
 */
export function inDocumentedOrder(event: Json): Json {
  const type = isObject(event) && typeof event.type === 'string' ? event.type : '';
  const data = type.startsWith('invoice.')
    ? (value: Json) => ordered(value, ORDER.invoice, { addresses: each(invoiceAddress) })
    : (value: Json) => ordered(value, ORDER.payment, { depositAddresses: each(paymentAddress) });
  return ordered(event, ORDER.envelope, { data });
}

export type { Json };

import { SchemaValidationError } from '../../errors/index.js';
import { parseEventEnvelope, type CheckoutEvent } from '../../schemas/event.js';
import { utf8Text } from '../verify/utf8.js';

/**
 * Turns another service's envelope into the event envelope checkout-kit reads: `{ id, type, createdAt, environment, data }`.
 * @example (json) => ({ id: json.event_id, type: json.kind, createdAt: json.at, data: json.object })
 */
export type EnvelopeMapper = (parsed: unknown) => unknown;

export type ParsedDelivery = { ok: true; event: CheckoutEvent } | { ok: false; code: 'invalid_json' | 'invalid_event'; message: string };

/** The body as text, or undefined when its bytes are not UTF-8 (then it cannot be stored byte-exact). */
export function bodyText(body: Uint8Array | string): string | undefined {
  return typeof body === 'string' ? body : utf8Text(body);
}

/** JSON-parse a verified body, map it, and check the envelope (and `data` of payment/invoice events). */
export function parseDelivery(text: string, mapEnvelope?: EnvelopeMapper): ParsedDelivery {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { ok: false, code: 'invalid_json', message: `Webhook body is not JSON: ${(error as Error).message}` };
  }
  let mapped = json;
  if (mapEnvelope) {
    try {
      mapped = mapEnvelope(json);
    } catch (error) {
      return { ok: false, code: 'invalid_event', message: `mapEnvelope threw: ${(error as Error).message}` };
    }
  }
  const result = parseEventEnvelope(mapped);
  if (result.success) return { ok: true, event: result.data };
  const error = new SchemaValidationError('Webhook event does not match the envelope { id, type, createdAt, environment?, data }', result.error.issues);
  return { ok: false, code: 'invalid_event', message: error.message };
}

import { messageOf, StoreError, WebhookVerificationError } from '../../errors/index.js';
import type { CheckoutEvent } from '../../schemas/event.js';
import type { Store } from '../../store/types.js';
import { isJsonContentType } from './content-type.js';
import type { Doctor } from '../doctor/create-doctor.js';
import { explainRejection } from '../doctor/explain-rejection.js';
import { headerGetter, type HeaderBag } from '../verify/header-value.js';
import { bodyText, parseDelivery } from './parse-delivery.js';
import { plainHeaders } from './plain-headers.js';
import { rawBody } from '../verify/raw-body.js';
import type { NormalizedReceiverOptions } from './receiver-options.js';
import { verificationFailure, webhookAck, webhookError, type WebhookResult } from './responses.js';
import type { VerifiedDelivery } from '../schemes/scheme.js';
import { eventEnvironment, toStoredEvent } from './stored-event.js';
import { byteLength, utf8Lenient } from '../verify/utf8.js';
import type { VerifyInput } from '../verify/verifier-options.js';

/** One delivery as any framework hands it over. */
export interface WebhookInput {
  headers: HeaderBag;
  /** The raw body: a Buffer / Uint8Array or the exact string. A parsed object answers 500 `raw_body_required`. */
  body: unknown;
  /** @default the `content-type` header */
  contentType?: string | undefined;
}

/**
 * What storing a delivery needs of a store. Any `Store` has it; on a runtime without Node, a Worker
 * can back it with its own storage (D1, a Durable Object) and give it to `createWebReceiver`.
 */
export type EventSink = Pick<Store, 'insertEvent' | 'insertDeadLetter'>;

/** The receiver options the core reads (the Node receiver passes all of its own; the Web receiver these). */
export type DeliveryOptions = Pick<NormalizedReceiverOptions, 'logger' | 'maxBodyBytes' | 'environment' | 'mapEnvelope' | 'clock'> & {
  store: EventSink;
};

export interface DeliveryContext {
  options: DeliveryOptions;
  /** Node's verifier (sync) or the WebCrypto one (async): this file never needs Node itself. */
  verify: (input: VerifyInput) => VerifiedDelivery | Promise<VerifiedDelivery>;
  /** Called once the event is durably stored for the first time (to dispatch it after the ack). */
  onStored(event: CheckoutEvent): void;
  /** Explains deliveries that fail verification (the Node receiver's raw-body doctor). */
  doctor?: Doctor | undefined;
}

/**
 * The framework-free core of the receiver: size, media type, signature, envelope, environment, then
 * store once. Every refusal is the spec's error object; only a 2xx means the event is durable.
 */
export async function handleDelivery(context: DeliveryContext, input: WebhookInput): Promise<WebhookResult> {
  const { options } = context;
  const { logger, store } = options;
  const refuse = (result: WebhookResult, details: Record<string, unknown> = {}): WebhookResult => {
    const { error } = result.body as { error: { code: string; message: string } };
    logger.warn({ status: result.status, code: error.code, ...details }, `Webhook refused: ${error.message}`);
    return result;
  };

  let body: Uint8Array | string;
  try {
    body = rawBody(input.body);
  } catch (error) {
    if (error instanceof WebhookVerificationError) {
      logger.error({ code: 'raw_body_required' }, error.message);
      return verificationFailure(error);
    }
    throw error;
  }

  const size = byteLength(body);
  if (size > options.maxBodyBytes) {
    return refuse(webhookError('payload_too_large', `Webhook body is ${size} bytes; the limit is ${options.maxBodyBytes} (receiver option maxBodyBytes).`));
  }
  const header = headerGetter(input.headers);
  const contentType = input.contentType ?? header('content-type');
  if (contentType !== undefined && !isJsonContentType(contentType)) {
    return refuse(webhookError('unsupported_media_type', `Webhook content type must be application/json, got "${contentType.slice(0, 100)}".`));
  }

  try {
    await context.verify({ headers: input.headers, body, now: options.clock().getTime() });
  } catch (error) {
    if (error instanceof WebhookVerificationError) {
      const explained = await explainRejection({ doctor: context.doctor, store, logger, clock: options.clock }, input.headers, body, error);
      return refuse(explained.result, explained.details);
    }
    // The receiver's own failure (the store, or stored merchant secrets it cannot open): logged
    // here, and answered with a 5xx that names nothing of it, so the service retries.
    logger.error({ err: messageOf(error) }, `Webhook could not be verified: ${messageOf(error)}`);
    return error instanceof StoreError
      ? webhookError('store_unavailable', 'Webhook could not be verified just now; retry later.', { 'retry-after': '5' })
      : webhookError('internal_error', 'Webhook could not be verified: the receiver failed (its log says why); retry later.');
  }

  const keepDeadLetter = async (code: 'invalid_json' | 'invalid_event', message: string, kept: string): Promise<WebhookResult> => {
    // Verified, so it really came from the service: keep it for inspection rather than lose it.
    try {
      const now = options.clock();
      await store.insertDeadLetter({ receivedAt: now.toISOString(), reason: `${code}: ${message}`, body: kept, headers: plainHeaders(input.headers) }, now);
    } catch (error) {
      logger.error({ err: String(error) }, `Could not keep the unparseable delivery as a dead letter: ${String(error)}`);
    }
    return refuse(webhookError(code, `${message} (kept as a dead letter for inspection)`));
  };
  const text = bodyText(body);
  if (text === undefined) return keepDeadLetter('invalid_json', 'Webhook body is not valid UTF-8.', utf8Lenient(body as Uint8Array));
  const parsed = parseDelivery(text, options.mapEnvelope);
  if (!parsed.ok) return keepDeadLetter(parsed.code, parsed.message, text);

  const event = parsed.event;
  const environment = eventEnvironment(event);
  if (options.environment !== undefined && environment !== undefined && environment !== options.environment) {
    const message =
      `Event ${event.id} (${event.type}) is a ${environment} event but this receiver is configured for ${options.environment}: ` +
      `refused and not stored. Point the ${environment} webhook at a receiver for ${environment}, or fix the receiver's environment option.`;
    logger.error({ eventId: event.id, eventEnvironment: environment, receiverEnvironment: options.environment }, message);
    return webhookError('wrong_environment', message);
  }

  let inserted: boolean;
  try {
    const now = options.clock();
    ({ inserted } = await store.insertEvent(toStoredEvent(event, text, now), now));
  } catch (error) {
    logger.error({ eventId: event.id, err: String(error) }, `Could not store event ${event.id}: ${String(error)}`);
    return webhookError('store_unavailable', `Event ${event.id} could not be stored; retry later.`, { 'retry-after': '5' });
  }
  if (inserted) context.onStored(event);
  else logger.debug({ eventId: event.id }, `Duplicate delivery of event ${event.id}: acknowledged, not dispatched again`);
  return webhookAck(event.id, !inserted);
}

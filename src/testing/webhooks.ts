import { randomUUID } from 'node:crypto';
import type { CheckoutEvent } from '../schemas/index.js';
import { generateTestHeaders } from '../webhooks/index.js';

/** An event envelope (contract 3c) around `data`. */
export function sampleEvent(type: string, data: { environment?: string | undefined } & Record<string, unknown>): CheckoutEvent {
  return { id: `evt_${randomUUID()}`, type, createdAt: new Date().toISOString(), environment: data.environment === 'live' ? 'live' : 'test', data };
}

/** The event to deliver, the secret to sign it with, and when. */
export interface SignedWebhookOptions {
  event: CheckoutEvent;
  /** The receiver's `whsec_…` secret. */
  secret: string;
  /** Unix seconds. @default now */
  timestamp?: number;
}

/** A signed delivery: the body and headers to send as they are. */
export interface SignedWebhook {
  /** The exact body to send. */
  body: string;
  /** Signature headers plus `content-type`. */
  headers: Record<string, string>;
}

/**
 * A delivery as the service would send it, ready for `app.inject({ method: 'POST', url, headers, payload: body })` or fetch.
 */
export function signedWebhook(options: SignedWebhookOptions): SignedWebhook {
  const body = JSON.stringify(options.event);
  return { body, headers: generateTestHeaders({ id: options.event.id, body, secret: options.secret, timestamp: options.timestamp }) };
}

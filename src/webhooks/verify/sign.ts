import { randomBytes } from 'node:crypto';
import { rawBody } from './raw-body.js';
import { DEFAULT_SCHEME, type WebhookScheme } from '../schemes/scheme.js';
import { resolveScheme } from '../schemes/resolve-scheme.js';

/** What to sign a delivery with: its id, body, secret, time and scheme. */
export interface SignWebhookOptions {
  /** Delivery id (`webhook-id`); replays reuse the stored event's id. Ignored by schemes without one. */
  id: string;
  /** Unix seconds. @default now */
  timestamp?: number;
  /** The exact body that will be sent. */
  body: string | Uint8Array;
  /** A secret, or several (one signature per secret, as during a rotation). */
  secret: string | readonly string[];
  /** @default { kind: 'standard-webhooks' } */
  scheme?: WebhookScheme;
}

/**
 * The signature headers for a delivery, so tests and replays send what the service would.
 * @example
 * const headers = signWebhook({ id: 'evt_1', body, secret: 'whsec_…' });
 * await fetch(url, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body });
 */
export function signWebhook(options: SignWebhookOptions): Record<string, string> {
  const scheme = resolveScheme(options.scheme ?? DEFAULT_SCHEME);
  const secrets = typeof options.secret === 'string' ? [options.secret] : [...options.secret];
  return scheme.sign({
    id: options.id,
    timestamp: options.timestamp ?? Math.floor(Date.now() / 1000),
    body: rawBody(options.body),
    keys: secrets.map((secret, index) => scheme.key(secret, index)),
  });
}

/** `generateTestHeaders`'s options: `signWebhook`'s, with the id optional. */
export interface TestHeadersOptions extends Omit<SignWebhookOptions, 'id'> {
  /** @default a random `msg_…` id */
  id?: string;
}

/**
 * Everything a test request needs: the signature headers plus `content-type: application/json`.
 * @example
 * await app.inject({ method: 'POST', url: '/webhooks/checkout', headers: generateTestHeaders({ body, secret }), payload: body });
 */
export function generateTestHeaders(options: TestHeadersOptions): Record<string, string> {
  const id = options.id ?? `msg_${randomBytes(12).toString('hex')}`;
  return { 'content-type': 'application/json', ...signWebhook({ ...options, id }) };
}

/** A fresh Standard Webhooks secret: `whsec_` + base64 of 24 random bytes. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

import { z } from 'zod';
import { KEY_DECODERS, type KeyForm } from './decode-secret.js';
import type { KeyedSchemeRules } from './rules.js';
import { plainHmac } from './plain-hmac.js';
import type { SchemeConfigSchema, SchemeEntry } from './scheme-entry.js';
import { standardWebhooks } from './standard-webhooks.js';
import { stripeStyle } from './stripe-style.js';

/** A registry keyed by kind: the compiler refuses an entry filed under another kind than its own. */
export function schemeRegistry<const R extends { [K in keyof R]: SchemeEntry<SchemeConfigSchema<K & string>> }>(entries: R): R {
  return entries;
}

/**
 * Every signature scheme checkout-kit verifies and signs, the default first (`probe-signature`
 * tries them in this order). The configuration parser, the Node and Web verifiers, `signWebhook`,
 * `probe-signature`, the raw-body doctor and `replay` all read this: a new scheme is one file in
 * this folder and one line here.
 */
export const SCHEMES = schemeRegistry({
  'standard-webhooks': standardWebhooks,
  'stripe-style': stripeStyle,
  hmac: plainHmac,
});

type Registry = typeof SCHEMES;
export type SchemeKind = keyof Registry;
type ConfigSchemaOf<K extends SchemeKind> = Registry[K]['config'];

/** Every configuration of every scheme, told apart by `kind`. */
export const WebhookSchemeSchema = z.discriminatedUnion(
  'kind',
  // `Object.values` forgets that the registry is not empty and which schemas it holds; both are so.
  Object.values(SCHEMES).map((entry) => entry.config) as [ConfigSchemaOf<SchemeKind>, ...Array<ConfigSchemaOf<SchemeKind>>],
);

/**
 * How deliveries are signed: the configuration of one scheme of `SCHEMES`, told apart by `kind`.
 * @default { kind: 'standard-webhooks' }
 * @example { kind: 'hmac', header: 'x-hub-signature-256', prefix: 'sha256=' }
 */
export type WebhookScheme = z.infer<typeof WebhookSchemeSchema>;

export function isSchemeKind(kind: string): kind is SchemeKind {
  return Object.hasOwn(SCHEMES, kind);
}

/**
 * The entry of a configured scheme, seen as any entry: TypeScript cannot tie `SCHEMES[scheme.kind]`
 * to `scheme` itself, so only pass it that same `scheme`.
 */
function schemeEntry(scheme: WebhookScheme): SchemeEntry {
  return SCHEMES[scheme.kind];
}

/** How the secrets of a configured scheme become key bytes. */
export function keyFormOf(scheme: WebhookScheme): KeyForm {
  return schemeEntry(scheme).keyForm;
}

/** Where a configured scheme signs its timestamp; `undefined` when it signs none. */
export function timestampHeaderOf(scheme: WebhookScheme): string | undefined {
  return schemeEntry(scheme).timestampHeader(scheme);
}

/** The rules of a configured scheme, without any crypto: shared by the Node and the Web verifier and the signer. */
export function schemeRules(scheme: WebhookScheme): KeyedSchemeRules {
  const entry = schemeEntry(scheme);
  return { ...entry.create(scheme), key: KEY_DECODERS[entry.keyForm] };
}

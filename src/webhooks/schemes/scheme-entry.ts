import type { z } from 'zod';
import type { KeyForm } from './decode-secret.js';
import type { SchemeRules } from './rules.js';

/** A scheme's configuration schema: a zod object whose `kind` is one literal. */
export type SchemeConfigSchema<Kind extends string = string> = z.ZodObject<{ kind: z.ZodLiteral<Kind> } & z.ZodRawShape>;

/** A delivery's headers by lower-case name, as received or captured. */
export type DeliveryHeaders = Readonly<Record<string, string>>;

/**
 * Everything checkout-kit knows about one signature scheme; `registry.ts` lists them all. Free of
 * any crypto library, so `checkout-kit/web` reads the same entries: `create` returns the rules,
 * which Node's crypto (`createVerifier`, `signWebhook`) and WebCrypto (`createWebVerifier`) run.
 */
export interface SchemeEntry<Schema extends SchemeConfigSchema = SchemeConfigSchema> {
  /** The configuration's `kind`. */
  readonly kind: z.infer<Schema>['kind'];
  /** The configuration, as `createReceiver({ scheme })` takes it and `probe-signature` prints it. */
  readonly config: Schema;
  /** The short form of `CHECKOUT_WEBHOOK_SCHEME`: `kind:part:part…`. */
  readonly text: {
    /** How the short form is written, for error messages, e.g. `stripe-style[:header]`. */
    readonly usage: string;
    /** The configuration the parts after the kind stand for (the schema checks it next); an empty part is unset. */
    parse(parts: readonly string[]): Omit<Partial<Record<keyof z.infer<Schema>, unknown>>, 'kind'>;
  };
  /** How a configured secret becomes key bytes. */
  readonly keyForm: KeyForm;
  /** Where the signed timestamp is, for humans (`probe-signature`); `undefined` when the scheme signs none. */
  timestampHeader(config: z.infer<Schema>): string | undefined;
  /** The rules that verify and sign deliveries of this configuration. */
  create(config: z.infer<Schema>): SchemeRules;
  /** The configurations of this scheme these headers look signed with (tried by `probe-signature`), best first. */
  looksLike(headers: DeliveryHeaders): Array<z.infer<Schema>>;
}

/** One scheme's entry, its `kind` read from its configuration schema. */
export function defineScheme<Schema extends SchemeConfigSchema>(config: Schema, entry: Omit<SchemeEntry<Schema>, 'kind' | 'config'>): SchemeEntry<Schema> {
  // The literal's type is `string` through the generic `Schema`; its value is the kind.
  return { kind: config.shape.kind.value as z.infer<Schema>['kind'], config, ...entry };
}

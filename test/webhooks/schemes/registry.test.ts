import { describe, expect, expectTypeOf, it } from 'vitest';
import type { z } from 'zod';
import { parseWebhookScheme } from '../../../src/config/index.js';
import {
  createVerifier,
  createWebVerifier,
  signWebhook,
  type PlainHmacScheme,
  type StandardWebhooksScheme,
  type StripeStyleScheme,
  type WebhookScheme,
} from '../../../src/webhooks/index.js';
import { KEY_DECODERS } from '../../../src/webhooks/schemes/decode-secret.js';
import { plainHmac } from '../../../src/webhooks/schemes/plain-hmac.js';
import { keyFormOf, schemeRegistry, SCHEMES, timestampHeaderOf, WebhookSchemeSchema, type SchemeKind } from '../../../src/webhooks/schemes/registry.js';
import type { SchemeConfigSchema, SchemeEntry } from '../../../src/webhooks/schemes/scheme-entry.js';
import { standardWebhooks } from '../../../src/webhooks/schemes/standard-webhooks.js';
import { stripeStyle } from '../../../src/webhooks/schemes/stripe-style.js';
import { SECRET } from '../helpers.js';

const NOW_SECONDS = 1_735_787_045;
const BODY = '{"id":"evt_1","type":"payment.paid","data":{"memo":"über ✓"}}';

/**
 * Configurations of every scheme, with a secret of its key form. Keyed by kind: a scheme added to
 * the registry without samples here is a compile error, so every scheme is round-tripped below.
 */
const SAMPLES: { [K in SchemeKind]: { secret: string; configs: Array<Extract<WebhookScheme, { kind: K }>> } } = {
  'standard-webhooks': { secret: SECRET, configs: [{ kind: 'standard-webhooks' }] },
  'stripe-style': { secret: 'sk_test_signing_0123456789', configs: [{ kind: 'stripe-style' }, { kind: 'stripe-style', header: 'X-Checkout-Signature' }] },
  hmac: {
    secret: 'gh_secret_0123456789',
    configs: [
      { kind: 'hmac', header: 'x-hub-signature-256', prefix: 'sha256=' },
      { kind: 'hmac', header: 'x-signature', algorithm: 'sha512', encoding: 'base64' },
      { kind: 'hmac', header: 'x-webhook-hmac', algorithm: 'sha256', encoding: 'base64' },
      { kind: 'hmac', header: 'x-sig-512', algorithm: 'sha512', encoding: 'hex', prefix: 'v=' },
    ],
  },
};

const CASES = Object.values(SAMPLES).flatMap(({ secret, configs }) =>
  configs.map((scheme) => ({ name: JSON.stringify(scheme), scheme: scheme as WebhookScheme, secret })),
);

/** Headers as a receiver or a capture holds them: names lower-cased. */
const lowerCased = (headers: Record<string, string>) => Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));

describe('scheme registry: types', () => {
  it('is keyed by every kind, each entry under its own', () => {
    expectTypeOf<keyof typeof SCHEMES>().toEqualTypeOf<WebhookScheme['kind']>();
    expectTypeOf<SchemeKind>().toEqualTypeOf<'standard-webhooks' | 'stripe-style' | 'hmac'>();
    expectTypeOf(SCHEMES).toExtend<{ [K in SchemeKind]: SchemeEntry<SchemeConfigSchema<K>> }>();
    // @ts-expect-error: an entry filed under another kind than its own
    schemeRegistry({ hmac: stripeStyle });
    schemeRegistry({ 'standard-webhooks': standardWebhooks, hmac: plainHmac });
  });

  it('WebhookScheme is inferred from the zod union, as the hand-written types were', () => {
    expectTypeOf<WebhookScheme>().toEqualTypeOf<z.infer<typeof WebhookSchemeSchema>>();
    expectTypeOf<WebhookScheme>().toEqualTypeOf<StandardWebhooksScheme | StripeStyleScheme | PlainHmacScheme>();
    expectTypeOf<StandardWebhooksScheme>().toEqualTypeOf<{ kind: 'standard-webhooks' }>();
    expectTypeOf<StripeStyleScheme>().toEqualTypeOf<{ kind: 'stripe-style'; header?: string | undefined }>();
    expectTypeOf<PlainHmacScheme>().toEqualTypeOf<{
      kind: 'hmac';
      header: string;
      algorithm?: 'sha256' | 'sha512' | undefined;
      encoding?: 'hex' | 'base64' | undefined;
      prefix?: string | undefined;
    }>();
    // @ts-expect-error: not a scheme
    const unknown: WebhookScheme = { kind: 'rot13' };
    // @ts-expect-error: a plain HMAC needs its header
    const headerless: WebhookScheme = { kind: 'hmac' };
    // @ts-expect-error: no such algorithm
    const md5: WebhookScheme = { kind: 'hmac', header: 'x-sig', algorithm: 'md5' };
    expect([unknown, headerless, md5].map((scheme) => WebhookSchemeSchema.safeParse(scheme).success)).toEqual([false, false, false]);
  });
});

describe('scheme registry: every entry', () => {
  it('is filed under its own kind, and has a text form starting with it', () => {
    for (const [kind, entry] of Object.entries(SCHEMES)) {
      expect(entry.kind).toBe(kind);
      expect(entry.text.usage.startsWith(kind)).toBe(true);
    }
    expect(Object.keys(SAMPLES).sort()).toEqual(Object.keys(SCHEMES).sort());
  });

  it.each(CASES.map((c) => [c.name, c] as const))('%s: sign, then verify (Node and WebCrypto)', async (_name, { scheme, secret }) => {
    const headers = signWebhook({ id: 'msg_1', timestamp: NOW_SECONDS, body: BODY, secret, scheme });
    const input = { headers, body: Buffer.from(BODY, 'utf8'), now: NOW_SECONDS * 1000 };
    const verified = createVerifier({ secrets: secret, scheme })(input);
    expect(await createWebVerifier({ secrets: secret, scheme })(input)).toEqual(verified);
    expect(verified.timestamp).toBe(timestampHeaderOf(scheme) === undefined ? undefined : NOW_SECONDS);
    const tampered = { ...input, body: Buffer.from(BODY.replace('paid', 'PAID'), 'utf8') };
    expect(() => createVerifier({ secrets: secret, scheme })(tampered)).toThrow(/No matching signature/);
    await expect(createWebVerifier({ secrets: secret, scheme })(tampered)).rejects.toThrow(/No matching signature/);
  });

  it.each(CASES.map((c) => [c.name, c] as const))('%s: its timestamp header is in what it signs', (_name, { scheme, secret }) => {
    const headers = lowerCased(signWebhook({ id: 'msg_1', timestamp: NOW_SECONDS, body: BODY, secret, scheme }));
    const where = timestampHeaderOf(scheme);
    if (where === undefined) expect(Object.values(headers).join(' ')).not.toContain(String(NOW_SECONDS));
    else expect(headers[where.split(' ')[0]!.toLowerCase()]).toContain(String(NOW_SECONDS));
  });

  it.each(CASES.map((c) => [c.name, c] as const))('%s: looksLike recognises its own signed headers', (_name, { scheme, secret }) => {
    const headers = lowerCased(signWebhook({ id: 'msg_1', timestamp: NOW_SECONDS, body: BODY, secret, scheme }));
    const guesses = SCHEMES[scheme.kind].looksLike({ ...headers, 'content-type': 'application/json', 'x-request-id': 'abc' });
    const verifying = guesses.filter((guess) => {
      try {
        createVerifier({ secrets: secret, scheme: guess })({ headers, body: BODY, now: NOW_SECONDS * 1000 });
        return true;
      } catch {
        return false;
      }
    });
    expect(verifying).toHaveLength(1);
    // What it guesses is a configuration the parser takes back as it is (the JSON probe-signature prints).
    expect(parseWebhookScheme(JSON.stringify(verifying[0]))).toEqual(verifying[0]);
  });

  it.each(CASES.map((c) => [c.name, c] as const))(
    '%s: its key form decodes its secret; configuration round-trips through the parser',
    (_name, { scheme, secret }) => {
      expect(KEY_DECODERS[keyFormOf(scheme)](secret, 0).byteLength).toBeGreaterThan(0);
      expect(parseWebhookScheme(JSON.stringify(scheme))).toEqual(scheme);
    },
  );

  it('looks like nothing on unsigned headers', () => {
    for (const entry of Object.values(SCHEMES)) expect(entry.looksLike({ 'content-type': 'application/json', 'x-request-id': 'abc' })).toEqual([]);
  });
});

import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { ConfigError, WebhookVerificationError } from '../../../src/errors/index.js';
import { createVerifier, generateTestHeaders, newWebhookSecret, signWebhook, verifyWebhook } from '../../../src/webhooks/index.js';
import { SECRET } from '../helpers.js';

// Published with the Standard Webhooks spec (libraries/javascript/src/webhook.test.ts, "sign function works").
const VECTOR = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};
const vectorHeaders = { 'webhook-id': VECTOR.id, 'webhook-timestamp': String(VECTOR.timestamp), 'webhook-signature': VECTOR.signature };
const nowSeconds = () => Math.floor(Date.now() / 1000);

/** The reason a verification failed, or 'verified'. */
function outcome(run: () => unknown): string {
  try {
    run();
    return 'verified';
  } catch (error) {
    if (error instanceof WebhookVerificationError) return error.reason;
    throw error;
  }
}

describe('Standard Webhooks test vector', () => {
  it('verifies the published vector at its own time', () => {
    const verified = verifyWebhook({ secrets: VECTOR.secret, headers: vectorHeaders, body: Buffer.from(VECTOR.body), now: VECTOR.timestamp * 1000 });
    expect(verified).toEqual({ id: VECTOR.id, timestamp: VECTOR.timestamp });
  });

  it('signWebhook reproduces the published signature', () => {
    const headers = signWebhook({ id: VECTOR.id, timestamp: VECTOR.timestamp, body: VECTOR.body, secret: VECTOR.secret });
    expect(headers).toEqual(vectorHeaders);
  });

  it('refuses the vector once it is older than the tolerance', () => {
    const error = (() => {
      try {
        // Just past the tolerance, on a clock of its own: the wall clock would say nothing before 2021.
        verifyWebhook({ secrets: VECTOR.secret, headers: vectorHeaders, body: VECTOR.body, now: (VECTOR.timestamp + 301) * 1000 });
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(WebhookVerificationError);
    expect((error as WebhookVerificationError).reason).toBe('timestamp_too_old');
    expect((error as Error).message).toMatch(/^Message timestamp too old/);
  });
});

describe('interoperability with the standardwebhooks package', () => {
  it('verifies deliveries signed by the reference library', () => {
    const secret = newWebhookSecret();
    const body = JSON.stringify({ id: 'evt_1', type: 'payment.paid', note: 'ünïcødé ✓' });
    const timestamp = new Date();
    const signature = new Webhook(secret).sign('msg_ref_1', timestamp, body);
    const headers = { 'webhook-id': 'msg_ref_1', 'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)), 'webhook-signature': signature };
    expect(verifyWebhook({ secrets: secret, headers, body: Buffer.from(body) }).id).toBe('msg_ref_1');
  });

  it('signs deliveries the reference library verifies', () => {
    const secret = newWebhookSecret();
    const body = '{"id":"evt_2","type":"payment.created"}';
    const headers = signWebhook({ id: 'msg_ours', body, secret });
    expect(new Webhook(secret).verify(body, headers)).toEqual({ id: 'evt_2', type: 'payment.created' });
  });
});

describe('verification failures', () => {
  const body = '{"id":"evt_3","type":"payment.paid"}';
  const fresh = () => signWebhook({ id: 'msg_3', body, secret: SECRET });

  it('accepts a correct delivery as Buffer, Uint8Array and string', () => {
    const headers = fresh();
    const bytes = new TextEncoder().encode(body);
    for (const raw of [Buffer.from(body), bytes, body]) expect(outcome(() => verifyWebhook({ secrets: SECRET, headers, body: raw }))).toBe('verified');
  });

  it('rejects a re-indented body (same JSON, other bytes)', () => {
    const reindented = JSON.stringify(JSON.parse(body), null, 2);
    expect(outcome(() => verifyWebhook({ secrets: SECRET, headers: fresh(), body: reindented }))).toBe('bad_signature');
  });

  it.each(['webhook-id', 'webhook-timestamp', 'webhook-signature'])('names a missing %s header', (name) => {
    const headers: Record<string, string> = fresh();
    delete headers[name];
    const run = () => verifyWebhook({ secrets: SECRET, headers, body });
    expect(outcome(run)).toBe('missing_headers');
    expect(run).toThrow(name);
  });

  it.each(['hello', '1614265330.5', '-5', ' 1614265330', ''])('rejects the malformed timestamp %j', (timestamp) => {
    const headers = { ...fresh(), 'webhook-timestamp': timestamp };
    expect(outcome(() => verifyWebhook({ secrets: SECRET, headers, body }))).toBe(timestamp === '' ? 'missing_headers' : 'bad_timestamp');
  });

  it('allows 300 s either way and no more, by default', () => {
    // A fixed now: signing against the wall clock could cross a second between two reads of it.
    const nowS = 1_900_000_000;
    const at = (offset: number) => signWebhook({ id: 'msg_t', timestamp: nowS + offset, body, secret: SECRET });
    const now = nowS * 1000;
    expect(outcome(() => verifyWebhook({ secrets: SECRET, headers: at(-300), body, now }))).toBe('verified');
    expect(outcome(() => verifyWebhook({ secrets: SECRET, headers: at(300), body, now }))).toBe('verified');
    expect(outcome(() => verifyWebhook({ secrets: SECRET, headers: at(-301), body, now }))).toBe('timestamp_too_old');
    expect(outcome(() => verifyWebhook({ secrets: SECRET, headers: at(301), body, now }))).toBe('timestamp_too_new');
  });

  it('takes a configured tolerance', () => {
    const now = 1_900_000_000_000;
    const headers = signWebhook({ id: 'msg_t', timestamp: now / 1000 - 11, body, secret: SECRET });
    expect(outcome(() => verifyWebhook({ secrets: SECRET, headers, body, now, toleranceSeconds: 10 }))).toBe('timestamp_too_old');
    expect(outcome(() => verifyWebhook({ secrets: SECRET, headers, body, now, toleranceSeconds: 20 }))).toBe('verified');
  });

  it('rejects a signature header without v1 entries, and a wrong secret', () => {
    const headers = fresh();
    const v2 = { ...headers, 'webhook-signature': headers['webhook-signature']!.replace('v1,', 'v2,') };
    expect(outcome(() => verifyWebhook({ secrets: SECRET, headers: v2, body }))).toBe('bad_signature');
    expect(outcome(() => verifyWebhook({ secrets: newWebhookSecret(), headers, body }))).toBe('bad_signature');
  });

  it('says the raw body was needed when given a parsed object', () => {
    const run = () => verifyWebhook({ secrets: SECRET, headers: fresh(), body: JSON.parse(body) });
    expect(outcome(run)).toBe('parsed_body');
    expect(run).toThrow(/already parsed.*raw body.*express\.json\(\).*express\.raw\(\{ type: 'application\/json' \}\)/s);
  });

  it('reads headers case-insensitively, from records and from Headers', () => {
    const headers = fresh();
    const shouty = Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toUpperCase(), value]));
    expect(outcome(() => verifyWebhook({ secrets: SECRET, headers: shouty, body }))).toBe('verified');
    expect(outcome(() => verifyWebhook({ secrets: SECRET, headers: new Headers(headers), body }))).toBe('verified');
  });
});

describe('secret rotation', () => {
  const oldSecret = newWebhookSecret();
  const newSecret = newWebhookSecret();
  const body = '{"id":"evt_r"}';
  const verify = createVerifier({ secrets: [oldSecret, newSecret] });

  it('accepts a delivery signed by any configured secret, and no other', () => {
    expect(outcome(() => verify({ headers: signWebhook({ id: 'm', body, secret: oldSecret }), body }))).toBe('verified');
    expect(outcome(() => verify({ headers: signWebhook({ id: 'm', body, secret: newSecret }), body }))).toBe('verified');
    expect(outcome(() => verify({ headers: signWebhook({ id: 'm', body, secret: newWebhookSecret() }), body }))).toBe('bad_signature');
  });

  it('accepts a header with several signatures when one matches', () => {
    const headers = signWebhook({ id: 'm', body, secret: [newWebhookSecret(), newSecret] });
    expect(headers['webhook-signature']!.split(' ')).toHaveLength(2);
    expect(outcome(() => createVerifier({ secrets: newSecret })({ headers, body }))).toBe('verified');
  });
});

describe('secrets', () => {
  it('newWebhookSecret makes whsec_ + base64 of 24 random bytes', () => {
    const a = newWebhookSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(Buffer.from(a.slice(6), 'base64')).toHaveLength(24);
    expect(newWebhookSecret()).not.toBe(a);
  });

  it('refuses a malformed secret and an empty list up front', () => {
    expect(() => createVerifier({ secrets: 'whsec_not base64!' })).toThrow(ConfigError);
    expect(() => createVerifier({ secrets: [] })).toThrow(/No webhook secret configured/);
  });

  it('an unset secret (a JavaScript caller passing an unset variable) is no secret, and a secret that is not a string a ConfigError', () => {
    expect(() => createVerifier({ secrets: undefined as never })).toThrow(/No webhook secret configured: set CHECKOUT_WEBHOOK_SECRET/);
    for (const secrets of [[42], { secret: SECRET }, [SECRET, undefined]]) {
      expect(() => createVerifier({ secrets: secrets as never })).toThrow(ConfigError);
      expect(() => createVerifier({ secrets: secrets as never })).toThrow(/^Verifier option secrets must be a string or an array of strings/);
    }
  });

  it('generateTestHeaders gives a verifiable JSON delivery', () => {
    const body = '{"id":"evt_g"}';
    const headers = generateTestHeaders({ body, secret: SECRET });
    expect(headers['content-type']).toBe('application/json');
    expect(headers['webhook-id']).toMatch(/^msg_/);
    expect(outcome(() => verifyWebhook({ secrets: SECRET, headers, body }))).toBe('verified');
  });
});

describe('other schemes', () => {
  const body = '{"id":"evt_s","type":"payment.paid"}';

  it('Stripe-style t=,v1= over "<t>.<body>" with the secret as key', () => {
    const scheme = { kind: 'stripe-style' } as const;
    const t = nowSeconds();
    const v1 = createHmac('sha256', SECRET).update(`${t}.${body}`).digest('hex');
    const headers = { 'stripe-signature': `t=${t},v1=${v1}` };
    expect(verifyWebhook({ secrets: SECRET, scheme, headers, body })).toEqual({ id: undefined, timestamp: t });
    expect(signWebhook({ id: 'unused', timestamp: t, body, secret: SECRET, scheme })).toEqual(headers);
    expect(outcome(() => verifyWebhook({ secrets: SECRET, scheme, headers, body: `${body} ` }))).toBe('bad_signature');
    const stale = signWebhook({ id: 'x', timestamp: t - 400, body, secret: SECRET, scheme });
    expect(outcome(() => verifyWebhook({ secrets: SECRET, scheme, headers: stale, body }))).toBe('timestamp_too_old');
    expect(outcome(() => verifyWebhook({ secrets: SECRET, scheme, headers: {}, body }))).toBe('missing_headers');
    expect(outcome(() => verifyWebhook({ secrets: SECRET, scheme, headers: { 'stripe-signature': `v1=${v1}` }, body }))).toBe('bad_timestamp');
  });

  it('plain HMAC-SHA256 hex with a prefix (GitHub style)', () => {
    const scheme = { kind: 'hmac', header: 'X-Hub-Signature-256', prefix: 'sha256=' } as const;
    const headers = { 'x-hub-signature-256': `sha256=${createHmac('sha256', 'plain-secret').update(body).digest('hex')}` };
    expect(outcome(() => verifyWebhook({ secrets: 'plain-secret', scheme, headers, body }))).toBe('verified');
    expect(signWebhook({ id: 'x', body, secret: 'plain-secret', scheme })).toEqual(headers);
    expect(outcome(() => verifyWebhook({ secrets: 'plain-secret', scheme, headers, body: body.replace('paid', 'pain') }))).toBe('bad_signature');
    expect(outcome(() => verifyWebhook({ secrets: 'plain-secret', scheme, headers: {}, body }))).toBe('missing_headers');
  });

  it('plain HMAC-SHA512 base64 (Shopify style)', () => {
    const scheme = { kind: 'hmac', header: 'x-shop-hmac', algorithm: 'sha512', encoding: 'base64' } as const;
    const headers = { 'x-shop-hmac': createHmac('sha512', 'shop-secret').update(body).digest('base64') };
    expect(outcome(() => verifyWebhook({ secrets: 'shop-secret', scheme, headers, body }))).toBe('verified');
    expect(outcome(() => verifyWebhook({ secrets: 'other-secret', scheme, headers, body }))).toBe('bad_signature');
  });
});

describe('property: any single changed byte is rejected', () => {
  const ID_CHARS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-';
  const idArb = fc.string({ unit: fc.constantFrom(...ID_CHARS), minLength: 1, maxLength: 40 });
  const verify = createVerifier({ secrets: SECRET });

  /** Replace the character at `index` by a different one drawn from `alphabet` (printable ASCII). */
  const replaceChar = (text: string, index: number, pick: number) => {
    const i = index % text.length;
    const alphabet = Array.from({ length: 95 }, (_, k) => String.fromCharCode(32 + k)).filter((c) => c !== text[i]);
    return text.slice(0, i) + alphabet[pick % alphabet.length]! + text.slice(i + 1);
  };

  it('flipping a byte of the id, the timestamp or the body fails verification', () => {
    fc.assert(
      fc.property(
        idArb,
        fc.integer({ min: -300, max: 300 }),
        fc.uint8Array({ minLength: 1, maxLength: 300 }),
        fc.constantFrom('id', 'timestamp', 'body'),
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        (id, skew, bytes, part, index, mask) => {
          const body = Buffer.from(bytes);
          const now = Date.now();
          const timestamp = Math.floor(now / 1000) + skew;
          const headers = signWebhook({ id, timestamp, body, secret: SECRET });
          expect(outcome(() => verify({ headers, body, now }))).toBe('verified');

          let tamperedHeaders = headers;
          let tamperedBody = body;
          if (part === 'id') tamperedHeaders = { ...headers, 'webhook-id': replaceChar(id, index, mask) };
          if (part === 'timestamp') tamperedHeaders = { ...headers, 'webhook-timestamp': replaceChar(String(timestamp), index, mask) };
          if (part === 'body') {
            tamperedBody = Buffer.from(body);
            tamperedBody[index % body.length]! ^= mask;
          }
          expect(outcome(() => verify({ headers: tamperedHeaders, body: tamperedBody, now }))).not.toBe('verified');
        },
      ),
      { numRuns: 500 },
    );
  });

  it('changing a character of the signature fails verification', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 200 }), fc.nat(), fc.nat(), (bytes, index, pick) => {
        const body = Buffer.from(bytes);
        const headers = signWebhook({ id: 'msg_p', body, secret: SECRET });
        const signature = headers['webhook-signature']!;
        const position = 3 + (index % (signature.length - 3));
        const tampered = { ...headers, 'webhook-signature': replaceChar(signature, position, pick) };
        expect(outcome(() => verify({ headers: tampered, body }))).not.toBe('verified');
      }),
      { numRuns: 300 },
    );
  });
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConfigError, WebhookVerificationError } from '../../../src/errors/index.js';
import { createVerifier, createWebVerifier, signWebhook, verifyWebhookWeb, type VerifierOptions, type WebhookScheme } from '../../../src/webhooks/index.js';
import { MULTIBYTE, NOW, NOW_SECONDS } from '../receive/delivery-flow.js';
import { SECRET } from '../helpers.js';

// Published with the Standard Webhooks spec (as in verify.test.ts): WebCrypto must reproduce it too.
const VECTOR = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  headers: {
    'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek',
    'webhook-timestamp': '1614265330',
    'webhook-signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
  },
  body: '{"test": 2432232314}',
};

const SCHEMES: Array<{ scheme: WebhookScheme; secrets: string[] }> = [
  { scheme: { kind: 'standard-webhooks' }, secrets: [SECRET, 'whsec_b2xkLXNlY3JldC1zdGlsbC12YWxpZA=='] },
  { scheme: { kind: 'stripe-style', header: 'x-shop-signature' }, secrets: ['sk_stripe_like_1', 'sk_stripe_like_2'] },
  { scheme: { kind: 'hmac', header: 'x-hub-signature-256', prefix: 'sha256=' }, secrets: ['gh-secret', 'gh-secret-old'] },
  { scheme: { kind: 'hmac', header: 'x-signature', algorithm: 'sha512', encoding: 'base64' }, secrets: ['plain-512'] },
];

type Outcome = { verified: unknown } | { reason: string; message: string };

async function settle(run: () => unknown): Promise<Outcome> {
  try {
    return { verified: await run() };
  } catch (error) {
    if (error instanceof WebhookVerificationError) return { reason: error.reason, message: error.message };
    throw error;
  }
}

/** Node's verifier and the WebCrypto one, on the same input: their outcomes must be identical. */
async function both(options: VerifierOptions, input: { headers: Record<string, string>; body: unknown; now?: number }) {
  const node = await settle(() => createVerifier(options)(input));
  const web = await settle(() => createWebVerifier(options)(input));
  return { node, web };
}

describe('createWebVerifier (WebCrypto) agrees with createVerifier (node:crypto)', () => {
  it('verifies the Standard Webhooks test vector', async () => {
    const result = await verifyWebhookWeb({ secrets: VECTOR.secret, headers: VECTOR.headers, body: VECTOR.body, now: 1614265330_000 });
    expect(result).toEqual({ id: 'msg_p5jXN8AQM9LWM0D4loKWxJek', timestamp: 1614265330 });
  });

  for (const { scheme, secrets } of SCHEMES) {
    const label = JSON.stringify(scheme);
    it(`${label}: accepts bytes and strings signed by either secret, refuses tampering, with the same messages`, async () => {
      const body = JSON.stringify({ id: 'evt_1', note: MULTIBYTE });
      for (const secret of secrets) {
        const headers = signWebhook({ id: 'msg_1', timestamp: NOW_SECONDS, body, secret, scheme });
        for (const sent of [body, new TextEncoder().encode(body), Buffer.from(body)]) {
          const { node, web } = await both({ secrets, scheme }, { headers, body: sent, now: NOW.getTime() });
          expect(web).toEqual(node);
          expect(web).toHaveProperty('verified');
        }
        const forged = await both({ secrets, scheme }, { headers, body: body.replace('evt_1', 'evt_2'), now: NOW.getTime() });
        expect(forged.web).toEqual(forged.node);
        expect(forged.web).toMatchObject({ reason: 'bad_signature' });
        const missing = await both({ secrets, scheme }, { headers: {}, body, now: NOW.getTime() });
        expect(missing.web).toEqual(missing.node);
        expect(missing.web).toMatchObject({ reason: 'missing_headers' });
      }
    });
  }

  it('refuses stale and future timestamps, and a parsed body, exactly as Node does', async () => {
    const body = '{"id":"evt_1"}';
    const headers = signWebhook({ id: 'msg_1', timestamp: NOW_SECONDS, body, secret: SECRET });
    const cases = [
      { now: NOW.getTime() + 301_000, reason: 'timestamp_too_old' },
      { now: NOW.getTime() - 301_000, reason: 'timestamp_too_new' },
    ];
    for (const { now, reason } of cases) {
      const { node, web } = await both({ secrets: SECRET }, { headers, body, now });
      expect(web).toEqual(node);
      expect(web).toMatchObject({ reason });
    }
    const parsed = await both({ secrets: SECRET }, { headers, body: JSON.parse(body), now: NOW.getTime() });
    expect(parsed.web).toEqual(parsed.node);
    expect(parsed.web).toMatchObject({ reason: 'parsed_body', message: expect.stringContaining('raw body') });
  });

  it('any body, any secret: WebCrypto and node:crypto reach the same verdict', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 2048 }), fc.uint8Array({ minLength: 1, maxLength: 64 }), fc.boolean(), async (bytes, key, flip) => {
        const secret = `whsec_${Buffer.from(key).toString('base64')}`;
        const headers = signWebhook({ id: 'msg_p', timestamp: NOW_SECONDS, body: bytes, secret });
        const sent = Uint8Array.from(bytes);
        if (flip && sent.length > 0) sent[0] = (sent[0] ?? 0) ^ 1;
        const { node, web } = await both({ secrets: secret }, { headers, body: sent, now: NOW.getTime() });
        expect(web).toEqual(node);
        expect('verified' in web).toBe(!(flip && sent.length > 0));
      }),
      { numRuns: 100 },
    );
  });

  it('refuses a malformed or missing secret when built, as Node does', () => {
    expect(() => createWebVerifier({ secrets: 'whsec_!!!' })).toThrow(ConfigError);
    expect(() => createWebVerifier({ secrets: [] })).toThrow(/No webhook secret configured/);
    expect(() => createWebVerifier({ secrets: SECRET, toleranceSeconds: -1 })).toThrow(/toleranceSeconds/);
  });
});

import { describe, expect, it } from 'vitest';
import type { Environment } from '../../../src/schemas/index.js';
import { MemoryStore } from '../../../src/store/index.js';
import { DAMAGES, diagnose, MAX_HMACS, type DamageKind, type Diagnosis } from '../../../src/webhooks/doctor/index.js';
import { createReceiver, signWebhook, type WebhookScheme } from '../../../src/webhooks/index.js';
import { resolveScheme } from '../../../src/webhooks/schemes/resolve-scheme.js';
import { headerGetter } from '../../../src/webhooks/verify/header-value.js';
import { captureLogger, SECRET } from '../helpers.js';

/** A fixed "now" (unix seconds): nothing here reads the wall clock. */
const NOW = 1_800_000_000;
const clock = () => new Date(NOW * 1000);
const OTHER_SECRET = 'whsec_b3RoZXItc2VjcmV0LW5vdC1jb25maWd1cmVkLWhlcmU=';

/** An event as the service writes it: compact JSON, documented key order, multibyte text as UTF-8. */
function eventBody(environment: Environment = 'test'): string {
  return JSON.stringify({
    id: 'evt_doctor_1',
    type: 'payment.paid',
    createdAt: '2027-01-15T08:00:00.000Z',
    environment,
    data: {
      id: '5b0b9b5e-7a8e-4f55-9d3c-3f1f4e0c2a11',
      status: 'PAID',
      environment,
      addressMode: 'invoice',
      amount: '25.00',
      amountReceived: '25.00',
      remaining: '0',
      surplus: '0',
      token: 'USDT',
      referenceId: 'commande-ñ-☕-🎉',
      email: 'zoë@example.com',
      expiresAt: '2027-01-15T09:00:00.000Z',
      depositAddresses: [{ networkId: 11155111, chainName: 'Sepolia', family: 'evm', address: '0x52908400098527886E0F7030069857D2E4169EE7', token: 'USDT' }],
    },
  });
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((key) => [key, sortKeys((value as Record<string, unknown>)[key])]),
  );
}
const escapeUnicode = (text: string) => text.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/** One damaged delivery: how the sender signed, what the receiver holds, and what reached it. */
interface Case {
  scheme?: WebhookScheme;
  /** The receiver's secret. @default SECRET */
  configured?: string;
  /** What the sender signs with. @default SECRET */
  senderSecret?: string;
  environment?: Environment;
  bodyEnvironment?: Environment;
  /** Seconds the signature's timestamp is before now. @default 0 */
  age?: number;
  /** What happened to the bytes on the way. @default unchanged */
  damage?: (body: string) => Buffer;
}

const utf8 = (text: string) => Buffer.from(text, 'utf8');
const STRIPE: WebhookScheme = { kind: 'stripe-style' };

/** Every damage the doctor knows, applied for real (the Record makes a missing one a type error). */
const DAMAGED: Record<DamageKind, Case> = {
  'reserialised-json': { damage: (body) => utf8(JSON.stringify(JSON.parse(body), null, 2)) },
  charset: { damage: (body) => Buffer.from(Buffer.from(body, 'utf8').toString('latin1'), 'utf8') },
  'form-encoded': { damage: (body) => utf8(`payload=${encodeURIComponent(body)}`) },
  'trailing-newline': { damage: (body) => utf8(`${body}\n`) },
  'secret-whitespace': { scheme: STRIPE, configured: 'sk_shop_signing_secret_1\n', senderSecret: 'sk_shop_signing_secret_1' },
  'secret-prefix': { scheme: STRIPE, configured: 'whsec_shopsecret123456', senderSecret: 'shopsecret123456' },
  'environment-secret': { environment: 'test', bodyEnvironment: 'live', senderSecret: OTHER_SECRET },
  'clock-skew': { age: 900 },
};

function deliver(c: Case) {
  const scheme = c.scheme ?? { kind: 'standard-webhooks' };
  const body = eventBody(c.bodyEnvironment ?? c.environment ?? 'test');
  const headers = {
    'content-type': 'application/json',
    ...signWebhook({ id: 'msg_doctor', timestamp: NOW - (c.age ?? 0), body, secret: c.senderSecret ?? SECRET, scheme }),
  };
  return { scheme, headers, body: c.damage ? c.damage(body) : utf8(body) };
}

/** Run the case through a real receiver; return its answer, log and dead letters. */
async function receive(c: Case, options: { development?: boolean; burst?: number } = {}) {
  const delivery = deliver(c);
  const store = new MemoryStore();
  const logger = captureLogger();
  const receiver = createReceiver({
    store,
    secrets: [c.configured ?? SECRET],
    scheme: delivery.scheme,
    environment: c.environment,
    clock,
    logger,
    dispatch: false,
    doctor: { development: options.development ?? true, burst: options.burst ?? 5 },
  });
  const result = await receiver.handle({ headers: delivery.headers, body: delivery.body });
  return { result, logger, store, message: (result.body as { error: { message: string } }).error.message };
}

/** The doctor alone, counting the HMACs it computes. */
function diagnoseCounting(c: Case, secrets: string[]): { diagnosis: Diagnosis; hmacs: number } {
  const delivery = deliver(c);
  const real = resolveScheme(delivery.scheme);
  let hmacs = 0;
  const counting = { ...real, verify: (context: Parameters<typeof real.verify>[0]) => ((hmacs += context.keys.length), real.verify(context)) };
  const diagnosis = diagnose(
    {
      scheme: counting,
      schemeKind: delivery.scheme.kind,
      secrets,
      keys: secrets.map((s, i) => real.key(s, i)),
      environment: 'test',
      toleranceSeconds: 300,
      nowSeconds: NOW,
      framework: 'unknown',
    },
    { header: headerGetter(delivery.headers), body: delivery.body, reason: 'bad_signature' },
  );
  return { diagnosis, hmacs };
}

describe('raw-body doctor: each damage gets its diagnosis', () => {
  for (const [cause, c] of Object.entries(DAMAGED) as Array<[DamageKind, Case]>) {
    it(`${cause}: refused, and explained as "${DAMAGES[cause].title}"`, async () => {
      const { result, logger, store, message } = await receive(c);
      expect(result.status).toBe(401);
      expect(await store.listEvents({})).toEqual([]);
      const refusal = logger.lines.find((line) => line.msg?.startsWith('Webhook refused'));
      expect(refusal?.obj).toMatchObject({ status: 401, cause, certain: cause !== 'environment-secret' });
      expect(message).toContain('Likely cause:');
      expect(message).toContain('Fix:');
      const [letter] = await store.listDeadLetters(10);
      expect(letter?.reason).toContain(DAMAGES[cause].title);
      // The secrets are used, never written out.
      for (const text of [message, letter!.reason, JSON.stringify(logger.lines)]) {
        for (const secret of [c.configured ?? SECRET, c.senderSecret ?? SECRET]) expect(text).not.toContain(secret.trim());
      }
    });
  }

  it('says what a re-serialisation changed: key order, whitespace, escaped unicode', async () => {
    const keyOrder = await receive({ damage: (body) => utf8(JSON.stringify(sortKeys(JSON.parse(body)))) });
    expect(keyOrder.message).toMatch(/re-serialised from parsed JSON \(changed: key order\)/);
    const unicode = await receive({ damage: (body) => utf8(escapeUnicode(body)) });
    expect(unicode.message).toMatch(/re-serialised from parsed JSON \(changed: escaped unicode\)/);
    const pretty = await receive({ damage: (body) => utf8(JSON.stringify(JSON.parse(body), null, 2)) });
    expect(pretty.message).toMatch(/\(changed: whitespace\)/);
  });

  it('a clock skew is told in seconds, and body damage with a skewed clock names both', async () => {
    expect((await receive({ age: 900 })).message).toMatch(/genuine\), but it was signed 900 s before this server's time, beyond the 300 s tolerance/);
    const ahead = (await receive({ age: -600 })).message;
    expect(ahead).toMatch(/signed 600 s after this server's time/);
    // Signed in the future is no old delivery sent again: the fix names both directions.
    expect(ahead).toMatch(/one signed after it comes from a sender whose clock runs ahead/);
    const both = await receive({ age: 900, damage: (body) => utf8(`${body}\n`) });
    expect(both.message).toMatch(/newline was added[\s\S]*also signed 900 s before/);
  });

  it('writes the fix for the framework in use: configured, or guessed from proxy headers', async () => {
    const delivery = deliver(DAMAGED['reserialised-json']);
    const receiver = createReceiver({
      store: new MemoryStore(),
      secrets: [SECRET],
      clock,
      logger: captureLogger(),
      dispatch: false,
      doctor: { development: true, framework: 'express' },
    });
    const express = await receiver.handle(delivery);
    expect((express.body as { error: { message: string } }).error.message).toContain('mount createNodeHandler(receiver) before app.use(express.json())');
    // express.raw on the route comes too late after an app-wide express.json(); the verify callback works after any.
    expect((express.body as { error: { message: string } }).error.message).toContain(
      "express.raw({ type: 'application/json' }) instead of express.json()), or keep the bytes with express.json({ verify:",
    );
    const proxied = await receive({ damage: (body) => utf8(JSON.stringify(JSON.parse(body), null, 1)) });
    expect(proxied.message).toContain('re-serialised');
    const viaProxy = await createReceiver({
      store: new MemoryStore(),
      secrets: [SECRET],
      clock,
      logger: captureLogger(),
      dispatch: false,
      doctor: { development: true },
    }).handle({
      headers: { ...delivery.headers, via: '1.1 edge-proxy' },
      body: delivery.body,
    });
    expect((viaProxy.body as { error: { message: string } }).error.message).toContain('a proxy in front of this app');
  });
});

describe('raw-body doctor: never weaker, bounded, quiet in production', () => {
  it('a genuine forgery gets "no known damage explains it"', async () => {
    const forged = await receive({ senderSecret: OTHER_SECRET });
    expect(forged.result.status).toBe(401);
    expect(forged.message).toContain('No known damage explains it');
    expect(forged.logger.lines.find((line) => line.msg?.startsWith('Webhook refused'))?.obj).toMatchObject({ cause: 'unknown', certain: false });
    // A tampered amount is a forgery too, not "damage".
    const tampered = await receive({ damage: (body) => utf8(body.replace('"amountReceived":"25.00"', '"amountReceived":"2500.00"')) });
    expect(tampered.message).toContain('No known damage explains it');
  });

  it('outside development mode the 401 says nothing more; the log and the dead letter still do', async () => {
    const { result, logger, store, message } = await receive(DAMAGED['trailing-newline'], { development: false });
    expect(result.status).toBe(401);
    expect(message).not.toContain('Likely cause');
    expect(JSON.stringify(logger.lines)).toMatch(/a newline was added at the end of the body/i);
    expect((await store.listDeadLetters(10))[0]?.reason).toMatch(/a newline was added/i);
  });

  it('is rate limited on the receiver clock: beyond the burst, refusals carry no diagnosis and keep no dead letter', async () => {
    const delivery = deliver({ senderSecret: OTHER_SECRET });
    let now = NOW * 1000;
    const store = new MemoryStore();
    const receiver = createReceiver({
      store,
      secrets: [SECRET],
      clock: () => new Date(now),
      logger: captureLogger(),
      dispatch: false,
      doctor: { development: true, burst: 2, perMinute: 6 },
    });
    const explained = async () => {
      const result = await receiver.handle({ headers: { ...delivery.headers, 'webhook-timestamp': String(Math.floor(now / 1000)) }, body: delivery.body });
      expect(result.status).toBe(401);
      return (result.body as { error: { message: string } }).error.message.includes('Likely cause');
    };
    expect([await explained(), await explained(), await explained()]).toEqual([true, true, false]);
    now += 10_000; // 6 a minute: one more after ten seconds
    expect([await explained(), await explained()]).toEqual([true, false]);
    expect(await store.listDeadLetters(100)).toHaveLength(3);
  });

  it(`computes at most ${MAX_HMACS} HMACs per diagnosis, however many secrets are configured`, () => {
    const secrets = Array.from({ length: 12 }, (_, i) => `whsec_${Buffer.from(`secret-number-${i}-xxxxxxxx`).toString('base64')}`);
    const forged = diagnoseCounting({ senderSecret: OTHER_SECRET, damage: (body) => utf8(JSON.stringify(JSON.parse(body), null, 2)) }, secrets);
    expect(forged.diagnosis.cause).not.toBe('unknown'); // pretty-printed: likely re-serialised, unproven
    expect(forged.diagnosis.certain).toBe(false);
    expect(forged.hmacs).toBeGreaterThan(0);
    expect(forged.hmacs).toBeLessThanOrEqual(MAX_HMACS);
  });

  it('keeps a refused body in the dead letter only up to 2 KiB', async () => {
    const big = `{"id":"evt_big","type":"payment.paid","pad":"${'x'.repeat(10_000)}"}`;
    const headers = { 'content-type': 'application/json', ...signWebhook({ id: 'msg_big', timestamp: NOW, body: big, secret: OTHER_SECRET }) };
    const store = new MemoryStore();
    await createReceiver({ store, secrets: [SECRET], clock, logger: captureLogger(), dispatch: false }).handle({ headers, body: big });
    const [letter] = await store.listDeadLetters(1);
    expect(letter!.body.length).toBeLessThan(2200);
    expect(letter!.body).toMatch(/cut at 2048 of \d+ bytes/);
  });

  it('doctor: false leaves refusals as they were', async () => {
    const delivery = deliver(DAMAGED['trailing-newline']);
    const store = new MemoryStore();
    const result = await createReceiver({ store, secrets: [SECRET], clock, logger: captureLogger(), dispatch: false, doctor: false }).handle(delivery);
    expect(result.status).toBe(401);
    expect((result.body as { error: { message: string } }).error.message).not.toContain('Likely cause');
    expect(await store.listDeadLetters(10)).toEqual([]);
  });
});

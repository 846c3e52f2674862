import { getEventListeners } from 'node:events';
import { Writable } from 'node:stream';
import nock from 'nock';
import { z } from 'zod';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CheckoutClient, PartnerClient, Transport, checkRequestSignature } from '../../src/client/index.js';
import { ApiError, ConfigError, InvalidRequestError, MoneyError, NetworkError, SchemaValidationError, TimeoutError } from '../../src/errors/index.js';
import { createLogger } from '../../src/log/index.js';
import { BASE_URL, PARTNER_OPTIONS, TEST_KEYS, sampleInvoice, samplePayment } from '../support/fixtures.js';

const client = (options: Partial<ConstructorParameters<typeof CheckoutClient>[0]> = {}) =>
  new CheckoutClient({ baseUrl: BASE_URL, ...TEST_KEYS, minRetryDelayMs: 10, ...options });

beforeAll(() => nock.disableNetConnect());
afterEach(() => nock.cleanAll());
afterAll(() => nock.enableNetConnect());

/** A logger at debug level writing JSON lines as the CLI does, and the lines it wrote (pino's numeric levels). */
function jsonLines() {
  const lines: Array<{ level: number; msg: string }> = [];
  const logger = createLogger({
    level: 'debug',
    format: 'json',
    destination: new Writable({
      write(chunk, _encoding, done) {
        lines.push(JSON.parse(String(chunk)) as { level: number; msg: string });
        done();
      },
    }),
  });
  return { logger, lines };
}

/** Up to `times` `method` requests to `path`, each answered with `answer()`; `calls` counts those that came. */
function counted(method: 'get' | 'post', path: string | RegExp, times: number, answer: () => nock.ReplyFnResult): { calls: number } {
  const counter = { calls: 0 };
  const scope = nock(BASE_URL);
  scope[method](path)
    .times(times)
    .reply(() => {
      counter.calls += 1;
      return answer();
    });
  return counter;
}

describe('a signal that lives as long as the process', () => {
  it("calls and their retries leave no listener on it (a receiver's stop signal is given to every read)", async () => {
    const stopping = new AbortController();
    const payment = samplePayment();
    // A 503 with Retry-After (the wait between tries listens to the signal), then answers.
    counted('get', `/v1/payments/${payment.id}`, 1, () => [503, { error: { code: 'unavailable', message: 'maintenance' } }, { 'Retry-After': '0' }]);
    counted('get', `/v1/payments/${payment.id}`, 20, () => [200, payment]);
    const reader = client();
    for (let i = 0; i < 20; i++) await reader.payments.get(payment.id, { signal: stopping.signal });
    expect(getEventListeners(stopping.signal, 'abort')).toHaveLength(0);
  });
});

describe('retries', () => {
  it('retries 503 twice and sends the same Idempotency-Key three times', async () => {
    const keys: string[] = [];
    nock(BASE_URL)
      .post('/v1/payments')
      .times(2)
      .reply(function () {
        keys.push(this.req.headers['idempotency-key'] as string);
        return [503, { error: { code: 'unavailable', message: 'try later' } }];
      })
      .post('/v1/payments')
      .reply(function () {
        keys.push(this.req.headers['idempotency-key'] as string);
        return [201, samplePayment()];
      });
    const payment = await client().payments.create({ amount: '5' });
    expect(payment.id).toBeTruthy();
    expect(keys).toHaveLength(3);
    expect(new Set(keys).size).toBe(1);
  });

  it('honours Retry-After on 429 before the next attempt', async () => {
    const times: number[] = [];
    nock(BASE_URL)
      .post('/v1/payments')
      .reply(() => {
        times.push(Date.now());
        return [429, { error: { code: 'rate_limited', message: 'slow down' } }, { 'Retry-After': '1' }];
      })
      .post('/v1/payments')
      .reply(() => {
        times.push(Date.now());
        return [201, samplePayment()];
      });
    await client().payments.create({ amount: '5' });
    expect(times).toHaveLength(2);
    // A lower bound only: a wait can be longer on a busy machine, never shorter.
    expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(990);
  });

  it('one 429 slows every caller: a call started after another call got 429 waits out its Retry-After too', async () => {
    const times: Record<string, number> = {};
    const a = samplePayment();
    const b = samplePayment();
    nock(BASE_URL)
      .get(`/v1/payments/${a.id}`)
      .reply(() => {
        times.first = Date.now();
        return [429, { error: { code: 'rate_limited', message: 'slow down' } }, { 'Retry-After': '1' }];
      })
      .get(`/v1/payments/${a.id}`)
      .reply(200, a)
      .get(`/v1/payments/${b.id}`)
      .reply(() => {
        times.other = Date.now();
        return [200, b];
      });
    const shared = client({ maxRps: 1000 });
    const pace = shared.rateLimiter.currentRps;
    const first = shared.payments.get(a.id);
    // Once the first call's 429 has reached the client, start the other one.
    while (shared.rateLimiter.currentRps === pace) await new Promise((resolve) => setImmediate(resolve));
    await shared.payments.get(b.id);
    await first;
    // A lower bound only: the other caller never went before the Retry-After was over.
    expect(times.other! - times.first!).toBeGreaterThanOrEqual(990);
    // And the shared rate was halved for everyone.
    expect(shared.rateLimiter.currentRps).toBeLessThan(pace);
  });

  it('clients given one RateLimiter share it (a CheckoutClient and a PartnerClient of one service)', () => {
    const checkout = client();
    const partner = new PartnerClient({ ...PARTNER_OPTIONS, rateLimiter: checkout.rateLimiter });
    expect(partner.rateLimiter).toBe(checkout.rateLimiter);
    expect(client({ maxRps: 7 }).rateLimiter.maxRps).toBe(7);
    expect(client().rateLimiter.maxRps).toBe(50);
  });

  it('retries 409 (same key in flight)', async () => {
    nock(BASE_URL)
      .post('/v1/payments')
      .reply(409, { error: { code: 'idempotency_key_in_flight', message: 'busy' } });
    nock(BASE_URL).post('/v1/payments').reply(201, samplePayment());
    await expect(client().payments.create({ amount: '5' })).resolves.toMatchObject({ status: 'CREATED' });
  });

  it('tries a 400 once and throws ApiError with status, code, operation and key', async () => {
    const answered = counted('post', '/v1/payments', 3, () => [400, { error: { code: 'invalid_request', message: 'amount too small' } }]);
    const error = await client()
      .payments.create({ amount: '0.0001' }, { idempotencyKey: 'k-400' })
      .catch((e: unknown) => e);
    expect(answered.calls).toBe(1);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({
      status: 400,
      code: 'invalid_request',
      operation: 'payments.create',
      idempotencyKey: 'k-400',
      serviceMessage: 'amount too small',
    });
    expect((error as Error).message).toContain('payments.create failed: 400 invalid_request');
  });

  it('gives up after the configured retries and reports the last error', async () => {
    const answered = counted('get', /\/v1\/payments\/.*/, 5, () => [500, 'oops']);
    const error = await client({ retries: 2 })
      .payments.get(samplePayment().id)
      .catch((e: unknown) => e);
    expect(answered.calls).toBe(3);
    expect(error).toMatchObject({ name: 'ApiError', status: 500, code: 'http_500' });
  });

  it('an outage is logged once, not per attempt: the first failed attempt warns, the rest are debug, and the first answer after it says so', async () => {
    const { logger, lines } = jsonLines();
    const reader = client({ logger, retries: 2, minRetryDelayMs: 1 });
    const payment = samplePayment();
    // Ten calls, each failing all three attempts; then the service is back.
    counted('get', `/v1/payments/${payment.id}`, 30, () => [503, { error: { code: 'unavailable', message: 'maintenance' } }]);
    for (let i = 0; i < 10; i++) await expect(reader.payments.get(payment.id)).rejects.toBeInstanceOf(ApiError);
    counted('get', `/v1/payments/${payment.id}`, 2, () => [200, payment]);
    await reader.payments.get(payment.id);
    await reader.payments.get(payment.id);
    const failedAttempts = lines.filter((line) => line.msg.includes('failed, retrying'));
    expect(failedAttempts).toHaveLength(20);
    expect(failedAttempts.filter((line) => line.level === 40)).toEqual([
      expect.objectContaining({ msg: expect.stringContaining('payments.get: attempt 1 failed, retrying (payments.get failed: 503 unavailable: maintenance') }),
    ]);
    expect(failedAttempts.filter((line) => line.level === 40)[0]!.msg).toContain(
      'Further failed attempts of any call are logged at debug until the service answers again.',
    );
    const back = lines.filter((line) => line.msg.includes('answers again ('));
    expect(back).toEqual([
      expect.objectContaining({ level: 30, msg: expect.stringMatching(/^the service answers again \(payments\.get\), after 20 failed attempt\(s\) since /) }),
    ]);
    expect(lines.filter((line) => line.level >= 40)).toHaveLength(1);
  });

  it('a 409 for a key in flight is an answer, not an outage: warned per attempt, and it ends an outage', async () => {
    const { logger, lines } = jsonLines();
    const reader = client({ logger, retries: 1, minRetryDelayMs: 1 });
    const payment = samplePayment();
    counted('get', `/v1/payments/${payment.id}`, 2, () => [503, { error: { code: 'unavailable', message: 'maintenance' } }]);
    await expect(reader.payments.get(payment.id)).rejects.toBeInstanceOf(ApiError);
    counted('get', `/v1/payments/${payment.id}`, 1, () => [409, { error: { code: 'request_in_progress', message: 'in flight' } }]);
    counted('get', `/v1/payments/${payment.id}`, 1, () => [200, payment]);
    await reader.payments.get(payment.id);
    expect(lines.filter((line) => line.msg.includes('answers again ('))).toEqual([
      expect.objectContaining({ msg: expect.stringMatching(/^the service answers again \(payments\.get\), after 1 failed attempt\(s\)/) }),
    ]);
    // The 409's own retry is a warning, as every attempt that the service answered.
    expect(lines.filter((line) => line.level === 40 && line.msg === 'payments.get: attempt 1 failed, retrying')).toHaveLength(1);
  });

  it('does not retry a malformed 200 body: SchemaValidationError with issues', async () => {
    const answered = counted('post', '/v1/payments', 2, () => [200, { id: 'x', amount: 25 }]);
    const error = await client()
      .payments.create({ amount: '25' })
      .catch((e: unknown) => e);
    expect(answered.calls).toBe(1);
    expect(error).toBeInstanceOf(SchemaValidationError);
    expect((error as SchemaValidationError).issues.map((issue) => issue.path.join('.'))).toEqual(expect.arrayContaining(['status', 'amount']));
  });

  it('a non-JSON 200 body is a SchemaValidationError', async () => {
    nock(BASE_URL).post('/v1/payments').reply(200, '<html>proxy</html>');
    await expect(client().payments.create({ amount: '1' })).rejects.toBeInstanceOf(SchemaValidationError);
  });

  it('network errors are retried, then NetworkError', async () => {
    // An Error, as a socket gives: nock's Node http interception never settles a plain object.
    nock(BASE_URL)
      .post('/v1/payments')
      .times(2)
      .replyWithError(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
    const error = await client({ retries: 1 })
      .payments.create({ amount: '1' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NetworkError);
    expect((error as Error).message).toContain('socket hang up');
  });

  it('a slow answer is a TimeoutError', async () => {
    nock(BASE_URL).post('/v1/payments').delay(500).reply(201, samplePayment());
    const error = await client({ retries: 0, timeoutMs: 50 })
      .payments.create({ amount: '1' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TimeoutError);
  });

  it('an AbortSignal stops the call and its retries', async () => {
    const answered = counted('post', '/v1/payments', 5, () => [503, { error: { code: 'unavailable', message: 'x' } }, { 'Retry-After': '5' }]);
    const controller = new AbortController();
    const calling = client()
      .payments.create({ amount: '1' }, { signal: controller.signal })
      .catch((e: unknown) => e);
    // Aborted while waiting out the first answer's Retry-After.
    while (answered.calls === 0) await new Promise((resolve) => setImmediate(resolve));
    controller.abort(new Error('user gave up'));
    const error = await calling;
    expect((error as Error).message).toBe('user gave up');
    expect(answered.calls).toBe(1);
  });
});

describe('input is checked before anything is sent', () => {
  // disableNetConnect + no interceptor: any request would fail with a different error.
  it.each([
    [25, 'JS number'],
    ['', 'empty'],
    ['-1', 'negative'],
    ['1e3', 'exponent'],
    ['0.1234567890123456789', '19 decimals'],
    ['1,000', 'separator'],
  ] as Array<[unknown, string]>)('amount %s (%s) is a MoneyError', async (amount) => {
    const error = await client()
      .payments.create({ amount: amount as string })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MoneyError);
  });

  it('18 decimals are accepted', async () => {
    nock(BASE_URL).post('/v1/payments', { amount: '0.123456789012345678' }).reply(201, samplePayment());
    await expect(client().payments.create({ amount: '0.123456789012345678' })).resolves.toBeTruthy();
  });

  it('an Idempotency-Key over 255 characters is refused', async () => {
    await expect(client().payments.create({ amount: '1' }, { idempotencyKey: 'k'.repeat(256) })).rejects.toThrow(/at most 255/);
  });

  it('a body never carries environment', async () => {
    const input = { amount: '1', environment: 'live' } as unknown as { amount: string };
    await expect(client().payments.create(input)).rejects.toThrow(/do not send "environment"/);
  });

  it('unknown fields and bad types are one clear InvalidRequestError', async () => {
    const error = await client()
      .payments.create({ amount: '1', networkId: 'one' as unknown as number, email: 'not-an-email' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect((error as Error).message).toMatch(/networkId/);
    expect((error as Error).message).toMatch(/email/);
  });

  it('payments.get refuses an id that is not a UUID', async () => {
    await expect(client().payments.get('../admin')).rejects.toThrow(/must be a UUID/);
  });

  // the sandbox refused "0" with a 400 while the client sent it; now both refuse it.
  it.each(['0', '0.00'])('a zero amount (%s) is refused up front by every create', async (amount) => {
    const partner = new PartnerClient(PARTNER_OPTIONS);
    const errors = await Promise.all([
      client()
        .payments.create({ amount })
        .catch((e: unknown) => e),
      client()
        .invoices.create({ amount })
        .catch((e: unknown) => e),
      partner.payments.create({ amount, merchantId: '0b6f1c2e-3c51-4d0a-9d8e-0d4f6a1b2c3d' }).catch((e: unknown) => e),
    ]);
    for (const error of errors) {
      expect(error).toBeInstanceOf(InvalidRequestError);
      expect((error as Error).message).toMatch(/is zero.*positive amount/);
    }
  });

  // spec 4.1 types merchantId as a uuid; a typo was sent and came back as a 404.
  it('partner payments.create refuses a merchantId that is not a UUID', async () => {
    const partner = new PartnerClient(PARTNER_OPTIONS);
    const error = await partner.payments.create({ amount: '1', merchantId: 'merchant-1' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect((error as Error).message).toMatch(/merchantId: expected a UUID/);
  });

  // fetch's TypeError for a header it cannot carry became a NetworkError ("could not
  // reach the service"), retried five times.
  it.each([
    ['ordre-é-1', 'non-ASCII'],
    ['order-😀', 'emoji'],
    ['order\n1', 'newline'],
  ])('an Idempotency-Key %j (%s) is an InvalidRequestError before any request, not a retried NetworkError', async (idempotencyKey) => {
    const answered = counted('post', '/v1/payments', 5, () => [201, samplePayment()]);
    const error = await client({ retries: 4 })
      .payments.create({ amount: '1' }, { idempotencyKey })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidRequestError);
    expect(error).not.toBeInstanceOf(NetworkError);
    expect((error as Error).message).toMatch(/idempotencyKey has a character HTTP headers cannot carry.*printable ASCII/);
    expect(answered.calls).toBe(0);
  });

  it('an Idempotency-Key with surrounding whitespace is refused (HTTP would strip it in transit)', async () => {
    await expect(client().payments.create({ amount: '1' }, { idempotencyKey: ' order-1 ' })).rejects.toThrow(/whitespace/);
  });
});

// the signer signed the spec path (/v1/...) while /api/v1/... went on the wire.
describe('the request signature covers the path actually sent', () => {
  const PREFIXED = `${BASE_URL}/api`;

  function capture(method: 'get' | 'post', path: string, body: unknown) {
    const seen: Array<{ path: string; signature: string; body: string }> = [];
    nock(BASE_URL)
      .intercept(path, method.toUpperCase())
      .reply(function (uri, requestBody) {
        seen.push({
          path: uri,
          signature: this.req.headers['x-request-signature'] as string,
          body: typeof requestBody === 'string' ? requestBody : JSON.stringify(requestBody),
        });
        return [method === 'post' ? 201 : 200, body as nock.Body];
      });
    return seen;
  }

  it('a base URL with a path prefix: the prefix is signed (POST and GET)', async () => {
    const prefixed = client({ baseUrl: PREFIXED });
    const payment = samplePayment();
    const created = capture('post', '/api/v1/payments', payment);
    const read = capture('get', `/api/v1/payments/${payment.id}`, payment);
    await prefixed.payments.create({ amount: '1' });
    await prefixed.payments.get(payment.id);
    for (const [seen, method] of [
      [created, 'POST'],
      [read, 'GET'],
    ] as const) {
      expect(seen).toHaveLength(1);
      const { path, signature, body } = seen[0]!;
      expect(path.startsWith('/api/v1/payments')).toBe(true);
      expect(checkRequestSignature({ header: signature, method, path, body, secret: TEST_KEYS.signingSecret })).toBeUndefined();
      // The spec path without the prefix is not what was signed.
      expect(checkRequestSignature({ header: signature, method, path: path.slice('/api'.length), body, secret: TEST_KEYS.signingSecret })).toBe(
        'X-Request-Signature does not match',
      );
    }
  });

  it('the query is signed with the prefix', async () => {
    const transport = new Transport({ baseUrl: `${PREFIXED}/`, retries: 0 });
    const seen = capture('get', '/api/v1/invoices?limit=5&status=PAID', [sampleInvoice()]);
    await transport.request({
      operation: 'test',
      method: 'GET',
      path: '/v1/invoices?limit=5&status=PAID',
      auth: { bearer: TEST_KEYS.invoiceKey, signingSecret: TEST_KEYS.signingSecret },
      schema: z.array(z.unknown()),
    });
    expect(seen[0]!.path).toBe('/api/v1/invoices?limit=5&status=PAID');
    expect(
      checkRequestSignature({
        header: seen[0]!.signature,
        method: 'GET',
        path: '/api/v1/invoices?limit=5&status=PAID',
        body: '',
        secret: TEST_KEYS.signingSecret,
      }),
    ).toBeUndefined();
  });

  it('a base URL that cannot carry a path (query, fragment, not http) is a ConfigError', () => {
    for (const baseUrl of ['https://host/api?x=1', 'https://host/api#x', 'ftp://host', 'not a url']) expect(() => client({ baseUrl })).toThrow(ConfigError);
  });
});

describe('configuration errors come before any request', () => {
  it('a timeoutMs a timer cannot keep (not a whole number, not positive, over 2^31 - 1 ms) is a ConfigError naming it', () => {
    for (const timeoutMs of [0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 31])
      expect(() => client({ timeoutMs })).toThrow(/timeoutMs must be a whole number/);
    expect(() => client({ timeoutMs: 2 ** 31 - 1 })).not.toThrow();
  });

  it('a retry count, retry delay or Retry-After cap that is not a whole number in range, or a maxRps that is not positive, is a ConfigError naming it', () => {
    // Values a JavaScript caller (or a number parsed from text) can pass, whatever the types say.
    const bad: Array<[Record<string, unknown>, RegExp]> = [
      ...[-1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '3'].map(
        (retries) => [{ retries }, /^retries must be a whole number/] as [Record<string, unknown>, RegExp],
      ),
      ...[-5, 0.5, Number.NaN, 2 ** 31, 'x'].map(
        (minRetryDelayMs) => [{ minRetryDelayMs }, /^minRetryDelayMs must be a whole number/] as [Record<string, unknown>, RegExp],
      ),
      ...[-1, 1.5, 'x'].map((maxRetryAfterMs) => [{ maxRetryAfterMs }, /^maxRetryAfterMs must be a whole number/] as [Record<string, unknown>, RegExp]),
      ...[0, -1, Number.NaN, Number.POSITIVE_INFINITY, '50'].map(
        (maxRps) => [{ maxRps }, /^maxRps must be a positive number/] as [Record<string, unknown>, RegExp],
      ),
    ];
    for (const [options, message] of bad) {
      expect(() => client(options as never), String(Object.values(options)[0])).toThrow(ConfigError);
      expect(() => client(options as never), String(Object.values(options)[0])).toThrow(message);
    }
    expect(() => client({ retries: 0, minRetryDelayMs: 0, maxRetryAfterMs: 0, maxRps: 0.5 })).not.toThrow();
  });

  it('mixed test and live keys', () => {
    expect(() => client({ invoiceKey: 'live_invoicekey0123456789abcdef' })).toThrow(ConfigError);
    expect(() => client({ invoiceKey: 'live_invoicekey0123456789abcdef' })).toThrow(/one environment/);
  });

  it('a partner key in the merchant slot', () => {
    expect(() => client({ apiKey: TEST_KEYS.partnerApiKey })).toThrow(/merchant key/);
  });

  it('a missing key for the operation', async () => {
    const noInvoiceKey = new CheckoutClient({ baseUrl: BASE_URL, apiKey: TEST_KEYS.apiKey, signingSecret: TEST_KEYS.signingSecret });
    await expect(noInvoiceKey.invoices.list()).rejects.toThrow(/CHECKOUT_INVOICE_KEY/);
  });

  it('reads the environment from the key prefix', () => {
    expect(client().environment).toBe('test');
  });
});

describe('secrets never leak', () => {
  it('no error message or log line of failing calls contains a key or secret', async () => {
    const canary = {
      apiKey: 'svc_mk_test_CANARY1canary1canary1',
      signingSecret: 'svc_ms_CANARY2canary2canary2',
      invoiceKey: 'test_CANARY3canary3canary3canary3',
    };
    let logged = '';
    const logger = createLogger({
      level: 'debug',
      destination: new Writable({
        write(chunk, _encoding, done) {
          logged += String(chunk);
          done();
        },
      }),
    });
    const leaky = new CheckoutClient({ baseUrl: BASE_URL, ...canary, logger, retries: 1, minRetryDelayMs: 1 });
    nock(BASE_URL)
      .post('/v1/payments')
      // A hostile or buggy server echoing the credentials back in its error message.
      .reply(500, { error: { code: 'boom', message: `bad key ${canary.apiKey} sig ${canary.signingSecret}` } })
      .post('/v1/payments')
      .reply(401, { error: { code: 'unauthorized', message: `key ${canary.apiKey} rejected` } });
    nock(BASE_URL).get('/v1/invoices').replyWithError(`connect failed with Bearer ${canary.invoiceKey}`);
    const errors = (await Promise.all([
      leaky.payments.create({ amount: '1' }).catch((e: Error) => e),
      leaky.invoices.list().catch((e: Error) => e),
    ])) as Error[];
    const text = errors.map((e) => `${e.message} ${String(e.stack)} ${JSON.stringify(e)}`).join('\n') + logged;
    expect(errors[0]).toBeInstanceOf(ApiError);
    expect(logged).toContain('attempt 1 failed');
    for (const secret of Object.values(canary)) expect(text).not.toContain(secret);
    expect(text).toContain('[redacted]');
  });
});

import nock from 'nock';
import { describe, expect, it } from 'vitest';
import { CheckoutClient, PartnerClient, type HttpCallRecord } from '../../src/client/index.js';
import { ApiError, InvalidResponseError, isOffSpec, offSpecRefusal, SchemaValidationError } from '../../src/errors/index.js';
import type { Logger } from '../../src/log/index.js';
import { BASE_URL, PARTNER_OPTIONS, TEST_KEYS, samplePayment } from '../support/fixtures.js';
import { strictNock } from '../support/strict-nock.js';

strictNock();

/** A logger that keeps every line with its level. */
function recordingLogger() {
  const lines: Array<{ level: string; obj: object | string; msg: string | undefined }> = [];
  const at =
    (level: string) =>
    (obj: object | string, msg?: string): void => {
      lines.push({ level, obj, msg });
    };
  const logger: Logger = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
  return { logger, lines, above: (levels: string[]) => lines.filter((line) => levels.includes(line.level)) };
}

function client(options: { onCall?: (call: HttpCallRecord) => void; logger?: Logger } = {}) {
  // Retries allowed: a malformed answer must still be asked for once only.
  return new CheckoutClient({ baseUrl: BASE_URL, ...TEST_KEYS, retries: 3, minRetryDelayMs: 1, ...options });
}

describe('a success status with a body that does not match the spec', () => {
  it.each(['javascript:alert(1)', '//evil.example/c', 'data:text/html,hi', 'https:/\\evil.example'])(
    'checkoutUrl %j: InvalidResponseError naming the operation and the field, asked once, counted and logged as a warning',
    async (checkoutUrl) => {
      nock(BASE_URL).post('/v1/payments').once().reply(201, samplePayment({ checkoutUrl }));
      const calls: HttpCallRecord[] = [];
      const log = recordingLogger();
      const error = await client({ onCall: (call) => calls.push(call), logger: log.logger })
        .payments.create({ amount: '10.00' })
        .catch((caught: unknown) => caught);

      expect(error).toBeInstanceOf(InvalidResponseError);
      expect(error).toBeInstanceOf(SchemaValidationError);
      expect(error).toMatchObject({ operation: 'payments.create', status: 201, method: 'POST', url: `${BASE_URL}/v1/payments`, fields: ['checkoutUrl'] });
      expect((error as Error).message).toMatch(
        /^payments\.create: the service's 201 answer does not match the spec \(POST https:\/\/api\.checkout\.test\/v1\/payments\): checkoutUrl: /,
      );
      expect(calls).toEqual([{ method: 'POST', url: `${BASE_URL}/v1/payments`, status: 'invalid_response' }]);
      expect(log.above(['warn', 'error'])).toEqual([
        { level: 'warn', obj: expect.objectContaining({ operation: 'payments.create', status: 201, fields: ['checkoutUrl'] }), msg: (error as Error).message },
      ]);
    },
  );

  it('a payment read without amountReceived names it: what decides the outcome is never taken as nothing received', async () => {
    const { amountReceived: _left, ...payment } = samplePayment({ status: 'PAID', amount: '10.00', amountReceived: '10.00' });
    nock(BASE_URL).get(`/v1/payments/${payment.id}`).once().reply(200, payment);
    const error = await client()
      .payments.get(payment.id)
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InvalidResponseError);
    expect((error as InvalidResponseError).fields).toEqual(['amountReceived']);
    // The partner's read likewise.
    nock(BASE_URL)
      .get(`/v1/payments/${payment.id}`)
      .once()
      .reply(200, { ...payment, merchantId: '0b6f2d3e-6f43-4f0a-9d55-3f1c2a7b8e01' });
    const partnerError = await new PartnerClient({ ...PARTNER_OPTIONS, retries: 3, minRetryDelayMs: 1 }).payments
      .get(payment.id)
      .catch((caught: unknown) => caught);
    expect((partnerError as InvalidResponseError).fields).toEqual(['amountReceived']);
  });

  it('a body that is not JSON: the field is the whole body', async () => {
    const { id } = samplePayment();
    nock(BASE_URL).get(`/v1/payments/${id}`).once().reply(200, '<html>maintenance</html>');
    const calls: HttpCallRecord[] = [];
    const error = await client({ onCall: (call) => calls.push(call) })
      .payments.get(id)
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InvalidResponseError);
    expect(error).toMatchObject({ operation: 'payments.get', status: 200, fields: ['(root)'] });
    expect((error as Error).message).toMatch(
      /^payments\.get: the service's 200 answer is not JSON \(GET .*\): \(root\): body starts "<html>maintenance<\/html>"$/,
    );
    expect(calls.map((call) => call.status)).toEqual(['invalid_response']);
  });

  it('every wrong field is named, once', async () => {
    const payment = samplePayment();
    const depositAddresses = [{ networkId: 'one', address: 1 }];
    nock(BASE_URL)
      .get(`/v1/payments/${payment.id}`)
      .once()
      .reply(200, { ...payment, amount: 10, depositAddresses });
    const error = await client()
      .payments.get(payment.id)
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InvalidResponseError);
    expect((error as InvalidResponseError).fields).toEqual(['amount', 'depositAddresses.0.networkId', 'depositAddresses.0.address']);
    expect((error as InvalidResponseError).summary).toBe(
      "The payment service's answer to payments.get does not match its spec (amount, depositAddresses.0.networkId, depositAddresses.0.address)",
    );
  });

  it('the summary a server shows names five fields at most, and no URL', () => {
    const issues = Array.from({ length: 7 }, (_, i) => ({ code: 'custom' as const, path: [`f${i}`], message: 'wrong', input: i }));
    const error = new InvalidResponseError({ operation: 'invoices.list', status: 200, method: 'GET', url: `${BASE_URL}/v1/invoices`, issues });
    expect(error.fields).toHaveLength(7);
    expect(error.summary).toBe("The payment service's answer to invoices.list does not match its spec (f0, f1, f2, f3, f4 and 2 more)");
  });

  it('a valid answer is counted by its status, with no warning', async () => {
    nock(BASE_URL).post('/v1/payments').once().reply(201, samplePayment());
    const calls: HttpCallRecord[] = [];
    const log = recordingLogger();
    await client({ onCall: (call) => calls.push(call), logger: log.logger }).payments.create({ amount: '10.00' });
    expect(calls.map((call) => call.status)).toEqual([201]);
    expect(log.above(['warn', 'error'])).toEqual([]);
  });
});

const PAYMENT_ID = '5f0b3c1e-0000-4000-8000-000000000001';

describe("an error status whose body is not the spec's error object", () => {
  const OFF_SPEC: Array<[string, 400 | 422, string | object, string]> = [
    ['an HTML page', 400, '<html><body>Bad Request</body></html>', 'Bad Request'],
    ['an empty body', 422, '', 'Unprocessable Entity'],
    ['plain text', 400, 'bad request', 'Bad Request'],
    ['JSON of another shape', 422, { message: 'nope' }, 'Unprocessable Entity'],
    ['an error that is a string', 400, { error: 'invalid_request' }, 'Bad Request'],
    ['an error object without a message', 422, { error: { code: 'invalid_request' } }, 'Unprocessable Entity'],
  ];

  it.each(OFF_SPEC)(
    '%s (%i): an ApiError marked hasErrorObject false, its code http_<status>, its message saying the service is at fault; asked once',
    async (_what, status, body, statusText) => {
      nock(BASE_URL).post('/v1/payments').once().reply(status, body);
      const error = await client()
        .payments.create({ amount: '10.00' }, { idempotencyKey: 'k-off-spec' })
        .catch((caught: unknown) => caught);

      expect(error).toBeInstanceOf(ApiError);
      expect(error).toMatchObject({ status, code: `http_${status}`, hasErrorObject: false, serviceMessage: statusText, idempotencyKey: 'k-off-spec' });
      expect((error as Error).message).toBe(
        `payments.create failed: the service's ${status} answer (${statusText}) is not the spec's error object: the service's fault, not the request's (POST ${BASE_URL}/v1/payments, Idempotency-Key k-off-spec)`,
      );
      expect(offSpecRefusal(error)).toBe(`The payment service's ${status} answer to payments.create does not match its spec (no error object)`);
    },
  );

  it('a 404 off the spec (another server under a wrong base URL, say) does not blame the service: its message says what to check', async () => {
    nock(BASE_URL).get(`/v1/payments/${PAYMENT_ID}`).once().reply(404, '<html><body>Not Found</body></html>');
    const error = await client()
      .payments.get(PAYMENT_ID)
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ status: 404, code: 'http_404', hasErrorObject: false });
    expect(isOffSpec(error)).toBe(true);
    expect((error as Error).message).toBe(
      `payments.get failed: 404 (Not Found) without the spec's error object: another server may have answered (check CHECKOUT_BASE_URL), or the service failed (GET ${BASE_URL}/v1/payments/${PAYMENT_ID})`,
    );
    expect(offSpecRefusal(error)).toBeUndefined();
  });

  it("the spec's error object is the service's refusal: hasErrorObject true, its code and message kept, no off-spec summary", async () => {
    nock(BASE_URL)
      .post('/v1/payments')
      .once()
      .reply(422, { error: { code: 'token_not_available', message: 'no DOGE here' } });
    const error = await client()
      .payments.create({ amount: '10.00' })
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ status: 422, code: 'token_not_available', serviceMessage: 'no DOGE here', hasErrorObject: true });
    expect(offSpecRefusal(error)).toBeUndefined();
  });

  it('an ApiError made without saying is taken as carrying the error object; only 400 and 422 off the spec get the off-spec summary', () => {
    const options = { code: 'invalid_request', message: 'amount too small', operation: 'payments.create', method: 'POST', url: `${BASE_URL}/v1/payments` };
    expect(new ApiError({ ...options, status: 400 }).hasErrorObject).toBe(true);
    expect(offSpecRefusal(new ApiError({ ...options, status: 400 }))).toBeUndefined();
    for (const status of [401, 404, 409, 429, 500, 502]) expect(offSpecRefusal(new ApiError({ ...options, status, hasErrorObject: false }))).toBeUndefined();
    expect(offSpecRefusal(new Error('400'))).toBeUndefined();
  });
});

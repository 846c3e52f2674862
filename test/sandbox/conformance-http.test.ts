import { createHmac, randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { z } from 'zod';
import {
  ErrorObjectSchema,
  InvoiceDetailSchema,
  InvoiceListSchema,
  InvoiceSchema,
  MerchantSchema,
  PartnerPaymentSchema,
  PaymentSchema,
  parseEventEnvelope,
} from '../../src/schemas/index.js';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/index.js';
import { cleanup, tempDir } from './helpers.js';

// Conformance B: hand-written HTTP against service-interface.md and contract 3. Only the sandbox's
// start and its credentials.json come from the project; requests are signed inline (contract 3b).
// Every answer is also read with the client's own schemas: what the sandbox sends, the
// toolkit must be able to read, losing nothing.

interface Creds {
  baseUrl: string;
  test: { partner: { apiKey: string; signingSecret: string }; merchant: { merchantId: string; apiKey: string; signingSecret: string; invoiceKey: string } };
  live: Creds['test'];
}

let sandbox: SandboxHandle;
let creds: Creds;

function sign(secret: string, method: string, path: string, body: string, t = Math.floor(Date.now() / 1000)): string {
  return `t=${t},v1=${createHmac('sha256', secret).update(`${t}.${method}.${path}.${body}`).digest('hex')}`;
}

interface Req {
  key?: string;
  secret?: string;
  body?: string;
  contentType?: string | null;
  idem?: string;
  signature?: string;
}

/** The client schema an answer of the sandbox must satisfy; undefined for what is not a spec resource. */
function clientSchemaFor(method: string, path: string, status: number): z.ZodType | undefined {
  const route = path.split('?')[0]!;
  if (status >= 400) return ErrorObjectSchema;
  if (method === 'POST' && route === '/v1/partner/payments') return PartnerPaymentSchema;
  if (method === 'POST' && route === '/v1/partner/merchants') return MerchantSchema;
  if (route === '/v1/payments' || /^\/v1\/payments\/[^/]+$/.test(route) || /^\/sandbox\/payments\/[^/]+\/(deposit|expire)$/.test(route)) return PaymentSchema;
  if (method === 'POST' && route === '/v1/invoices') return InvoiceSchema;
  if (method === 'GET' && route === '/v1/invoices') return InvoiceListSchema;
  if (/^\/v1\/invoices\/[^/]+$/.test(route) || /^\/sandbox\/invoices\/[^/]+\/(deposit|expire)$/.test(route)) return InvoiceDetailSchema;
  return undefined;
}

/** Paths of every `null` in `value` (the spec types no field as nullable). */
function nullPaths(value: unknown, path = '$'): string[] {
  if (value === null) return [path];
  if (Array.isArray(value)) return value.flatMap((item, i) => nullPaths(item, `${path}[${i}]`));
  if (typeof value === 'object') return Object.entries(value as object).flatMap(([k, v]) => nullPaths(v, `${path}.${k}`));
  return [];
}

/** The answer parses with the client's schema, unchanged (nothing dropped or coerced), and has no nulls. */
function expectReadableByClient(method: string, path: string, status: number, json: unknown) {
  const schema = clientSchemaFor(method, path, status);
  if (!schema) return;
  const parsed = schema.safeParse(json);
  expect(parsed.success, `${method} ${path} ${status}: ${JSON.stringify(parsed.error?.issues)}`).toBe(true);
  expect(parsed.data, `${method} ${path}: the client read something else than was sent`).toStrictEqual(json);
  expect(nullPaths(json), `${method} ${path}: null where the spec types a value`).toEqual([]);
}

let checkedResponses = 0;

async function send(method: 'GET' | 'POST', path: string, req: Req = {}) {
  const headers: Record<string, string> = {};
  if (req.key) headers.authorization = `Bearer ${req.key}`;
  if (req.body !== undefined && req.contentType !== null) headers['content-type'] = req.contentType ?? 'application/json';
  if (req.idem) headers['idempotency-key'] = req.idem;
  if (req.signature) headers['x-request-signature'] = req.signature;
  else if (req.secret) headers['x-request-signature'] = sign(req.secret, method, path, req.body ?? '');
  const response = await fetch(`${creds.baseUrl}${path}`, { method, headers, body: req.body });
  const text = await response.text();
  const json = response.headers.get('content-type')?.startsWith('application/json') && text ? JSON.parse(text) : undefined;
  if (json !== undefined && clientSchemaFor(method, path, response.status)) {
    expectReadableByClient(method, path, response.status, json);
    checkedResponses += 1;
  }
  return { status: response.status, type: response.headers.get('content-type'), headers: response.headers, text, json };
}

const merchantReq = (body?: unknown, extra: Req = {}): Req => ({
  key: creds.test.merchant.apiKey,
  secret: creds.test.merchant.signingSecret,
  body: body === undefined ? undefined : JSON.stringify(body),
  ...extra,
});
const partnerReq = (body?: unknown, extra: Req = {}): Req => ({
  key: creds.test.partner.apiKey,
  secret: creds.test.partner.signingSecret,
  body: body === undefined ? undefined : JSON.stringify(body),
  idem: randomUUID(),
  ...extra,
});
const invoiceReq = (body?: unknown, extra: Req = {}): Req => ({
  key: creds.test.merchant.invoiceKey,
  body: body === undefined ? undefined : JSON.stringify(body),
  ...extra,
});

/** The spec's error object (2.6): exactly `{ error: { code, message } }`, code snake_case. */
function expectError(res: Awaited<ReturnType<typeof send>>, status: number, code?: string) {
  expect(res.status, res.text).toBe(status);
  expect(res.type).toMatch(/^application\/json/);
  expect(Object.keys(res.json)).toEqual(['error']);
  expect(Object.keys(res.json.error).sort()).toEqual(['code', 'message']);
  expect(res.json.error.code).toMatch(/^[a-z]+(_[a-z]+)*$/);
  expect(typeof res.json.error.message).toBe('string');
  expect(res.json.error.message.length).toBeGreaterThan(0);
  if (code) expect(res.json.error.code).toBe(code);
}

/** Always present. `token`, `referenceId`, `email`, `successUrl`, `cancelUrl` are present when given, never `null`. */
const PAYMENT_FIELDS = [
  'id',
  'status',
  'environment',
  'addressMode',
  'amount',
  'amountReceived',
  'remaining',
  'surplus',
  'checkoutUrl',
  'expiresAt',
  'depositAddresses',
  'createdAt',
  'updatedAt',
];
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

function expectPayment(p: Record<string, any>) {
  for (const field of PAYMENT_FIELDS) expect(p, field).toHaveProperty(field);
  expect(p.id).toMatch(UUID);
  for (const field of ['amount', 'amountReceived', 'remaining', 'surplus']) expect(p[field]).toMatch(/^\d+(\.\d+)?$/);
  for (const field of ['expiresAt', 'createdAt', 'updatedAt']) expect(p[field]).toMatch(ISO);
  expect(p.addressMode).toBe('invoice');
  expect(p.depositAddresses.length).toBeGreaterThan(0);
  for (const a of p.depositAddresses) {
    expect(Object.keys(a).sort()).toEqual(['address', 'chainId', 'chainName', 'family', 'networkId', 'token']);
    expect(a.chainId).toMatch(UUID);
    expect(Number.isInteger(a.networkId)).toBe(true);
    expect(a.address).toMatch(a.family === 'evm' ? /^0x[0-9a-f]{40}$/ : /^T[1-9A-HJ-NP-Za-km-z]{33}$/);
  }
}

beforeAll(async () => {
  sandbox = await startSandbox({ dataDir: await tempDir() });
  creds = JSON.parse(await readFile(sandbox.credentialsPath, 'utf8')) as Creds;
});
afterAll(async () => {
  await sandbox.close();
  await cleanup();
});

describe('success statuses, headers and bodies', () => {
  it('POST /v1/payments: 201 with a full Payment; replay 200 with the same body; GET 200', async () => {
    const body = { amount: '19.99', email: 'b@example.com', referenceId: 'r-1', successUrl: 'https://shop.example/s', cancelUrl: 'https://shop.example/c' };
    const created = await send('POST', '/v1/payments', merchantReq(body, { idem: 'b-1' }));
    expect(created.status).toBe(201);
    expect(created.type).toBe('application/json; charset=utf-8');
    expectPayment(created.json);
    expect(created.json).not.toHaveProperty('merchantId');
    expect(created.json).toMatchObject({ ...body, status: 'CREATED', environment: 'test', amountReceived: '0', remaining: '19.99' });

    const replay = await send('POST', '/v1/payments', merchantReq(body, { idem: 'b-1' }));
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.json).toEqual(created.json);

    const read = await send('GET', `/v1/payments/${created.json.id}`, merchantReq());
    expect(read.status).toBe(200);
    expect(read.json).toEqual(created.json);
  });

  it('POST /v1/partner/merchants 201 and /v1/partner/payments 201 with merchantId', async () => {
    const merchant = await send('POST', '/v1/partner/merchants', partnerReq({ externalTenantId: 't-9', email: 'm@example.com', name: 'M' }));
    expect(merchant.status).toBe(201);
    for (const field of [
      'merchantId',
      'organizationId',
      'partnerId',
      'externalTenantId',
      'name',
      'email',
      'integrationStatus',
      'dashboardAccess',
      'wallets',
      'registeredFamilies',
      'createdAt',
      'updatedAt',
    ]) {
      expect(merchant.json, field).toHaveProperty(field);
    }
    for (const field of ['merchantId', 'organizationId', 'partnerId']) expect(merchant.json[field]).toMatch(UUID);
    // A test merchant has not asked for live access: the two timestamps are absent, not null.
    expect(merchant.json).not.toHaveProperty('liveRequestedAt');
    expect(merchant.json).not.toHaveProperty('liveApprovedAt');
    expect(typeof merchant.json.dashboardAccess).toBe('boolean');
    expect(merchant.json.registeredFamilies).toEqual({ evm: true, tron: true });
    for (const w of merchant.json.wallets)
      expect(Object.keys(w).sort()).toEqual(['address', 'addressDisplay', 'chainName', 'family', 'networkId', 'registered']);

    const payment = await send('POST', '/v1/partner/payments', partnerReq({ merchantId: merchant.json.merchantId, amount: '7.5', token: 'USDT' }));
    expect(payment.status).toBe(201);
    expectPayment(payment.json);
    expect(payment.json.merchantId).toBe(merchant.json.merchantId);
    expect(payment.json.token).toBe('USDT');
  });

  it('POST /v1/invoices 201; GET /v1/invoices 200 bare array; GET /v1/invoices/{id} 200 with payments and settlements', async () => {
    const created = await send('POST', '/v1/invoices', invoiceReq({ amount: '40' }));
    expect(created.status).toBe(201);
    for (const field of ['id', 'status', 'environment', 'amount', 'amountReceived', 'checkoutUrl', 'expiresAt', 'addresses'])
      expect(created.json, field).toHaveProperty(field);
    expect(created.json).not.toHaveProperty('referenceId');
    expect(created.json.status).toBe('CREATED');
    for (const a of created.json.addresses) {
      expect(Object.keys(a).sort()).toEqual(['chainId', 'chainName', 'depositAddress', 'family', 'networkId', 'tokens']);
      for (const t of a.tokens) expect(Number.isInteger(t.decimals)).toBe(true);
    }
    const list = await send('GET', '/v1/invoices', invoiceReq());
    expect(list.status).toBe(200);
    expect(Array.isArray(list.json)).toBe(true);
    expect(list.json[0].id).toBe(created.json.id);
    const detail = await send('GET', `/v1/invoices/${created.json.id}`, invoiceReq());
    expect(detail.status).toBe(200);
    expect(detail.json.payments).toEqual([]);
    expect(detail.json.settlements).toEqual([]);
  });
});

describe('400 invalid_request', () => {
  const cases: Array<[string, () => Req]> = [
    ['malformed JSON', () => merchantReq(undefined, { body: '{"amount": "1",' })],
    ['a non-JSON content type', () => merchantReq(undefined, { body: 'amount=1', contentType: 'application/x-www-form-urlencoded' })],
    ['no content type', () => merchantReq(undefined, { body: '{"amount":"1"}', contentType: null })],
    ['an empty body', () => merchantReq(undefined, { body: '' })],
    ['a JSON array', () => merchantReq([{ amount: '1' }])],
    ['an unknown field', () => merchantReq({ amount: '1', colour: 'red' })],
    ['amount as a JSON number', () => merchantReq({ amount: 1 })],
    ['a negative amount', () => merchantReq({ amount: '-1' })],
    ['an amount in exponent notation', () => merchantReq({ amount: '1e3' })],
    ['a missing amount', () => merchantReq({ email: 'a@example.com' })],
    ['networkId as a string', () => merchantReq({ amount: '1', networkId: '11155111' })],
    ['a bad email', () => merchantReq({ amount: '1', email: 'not-an-email' })],
    ['environment in the body', () => merchantReq({ amount: '1', environment: 'test' })],
    ['an Idempotency-Key over 255 characters', () => merchantReq({ amount: '1' }, { idem: 'k'.repeat(256) })],
  ];
  it.each(cases)('POST /v1/payments with %s', async (_name, req) => {
    expectError(await send('POST', '/v1/payments', req()), 400, 'invalid_request');
  });

  it('partner operations require Idempotency-Key', async () => {
    expectError(
      await send('POST', '/v1/partner/merchants', partnerReq({ externalTenantId: 't', email: 'e@example.com', name: 'n' }, { idem: undefined })),
      400,
      'invalid_request',
    );
  });

  it('invoice creation refuses environment and unknown fields too', async () => {
    expectError(await send('POST', '/v1/invoices', invoiceReq({ amount: '1', environment: 'live' })), 400, 'invalid_request');
    expectError(await send('POST', '/v1/invoices', invoiceReq({ amount: '1', memo: 'x' })), 400, 'invalid_request');
  });
});

describe('401 unauthorized', () => {
  it('without Authorization, with an unknown key, without or with a bad or stale signature', async () => {
    const body = JSON.stringify({ amount: '1' });
    expectError(await send('POST', '/v1/payments', { body }), 401, 'unauthorized');
    expectError(await send('POST', '/v1/payments', { ...merchantReq({ amount: '1' }), key: 'svc_mk_test_nope' }), 401, 'unauthorized');
    expectError(await send('POST', '/v1/payments', { key: creds.test.merchant.apiKey, body }), 401, 'unauthorized');
    expectError(
      await send('POST', '/v1/payments', merchantReq({ amount: '1' }, { signature: sign('svc_ms_wrong', 'POST', '/v1/payments', body) })),
      401,
      'unauthorized',
    );
    expectError(
      await send(
        'POST',
        '/v1/payments',
        merchantReq({ amount: '1' }, { signature: sign(creds.test.merchant.signingSecret, 'POST', '/v1/payments', '{"amount":"2"}') }),
      ),
      401,
    );
    const stale = sign(creds.test.merchant.signingSecret, 'POST', '/v1/payments', body, Math.floor(Date.now() / 1000) - 3600);
    expectError(await send('POST', '/v1/payments', merchantReq({ amount: '1' }, { signature: stale })), 401, 'unauthorized');
    expectError(await send('GET', `/v1/payments/${randomUUID()}`, { key: creds.test.merchant.apiKey }), 401, 'unauthorized');
    expectError(
      await send('POST', '/v1/partner/merchants', { ...partnerReq({ externalTenantId: 't', email: 'e@example.com', name: 'n' }), secret: undefined }),
      401,
    );
    expectError(await send('GET', '/v1/invoices', { key: 'test_unknown' }), 401, 'unauthorized');
  });

  // Buffer.from(hex) stopped at the first non-hex character, so this was accepted.
  it.each(['zz', 'g', '00', '!'])('a valid signature with trailing garbage %j is 401', async (garbage) => {
    const body = JSON.stringify({ amount: '1' });
    const signature = `${sign(creds.test.merchant.signingSecret, 'POST', '/v1/payments', body)}${garbage}`;
    expectError(await send('POST', '/v1/payments', merchantReq({ amount: '1' }, { signature })), 401, 'unauthorized');
    const partnerBody = { externalTenantId: 't', email: 'e@example.com', name: 'n' };
    const partnerSignature = `${sign(creds.test.partner.signingSecret, 'POST', '/v1/partner/merchants', JSON.stringify(partnerBody))}${garbage}`;
    expectError(await send('POST', '/v1/partner/merchants', partnerReq(partnerBody, { signature: partnerSignature })), 401, 'unauthorized');
  });
});

describe('403 forbidden: wrong key kind or environment', () => {
  it('refuses keys of another kind on each operation', async () => {
    expectError(await send('POST', '/v1/payments', { ...invoiceReq({ amount: '1' }), secret: creds.test.merchant.signingSecret }), 403, 'forbidden');
    expectError(
      await send('POST', '/v1/partner/merchants', { ...merchantReq({ externalTenantId: 't', email: 'e@example.com', name: 'n' }), idem: 'x' }),
      403,
      'forbidden',
    );
    expectError(await send('POST', '/v1/invoices', { ...partnerReq({ amount: '1' }) }), 403, 'forbidden');
    expectError(await send('GET', '/v1/invoices', merchantReq()), 403, 'forbidden');
  });

  it('refuses simulation on live records', async () => {
    const live = await send('POST', '/v1/payments', { key: creds.live.merchant.apiKey, secret: creds.live.merchant.signingSecret, body: '{"amount":"1"}' });
    expect(live.status).toBe(201);
    expect(live.json.environment).toBe('live');
    expectError(await send('POST', `/sandbox/payments/${live.json.id}/deposit`, { body: '{"amount":"1"}' }), 403, 'forbidden');
  });

  // the merchant lookup excluded the other environment's merchants, so this 403 could
  // not be reached. A partner has one partnerId with a key pair per environment.
  it('a partner key asking for a payment for its own merchant of the other environment gets 403 forbidden', async () => {
    const res = await send('POST', '/v1/partner/payments', partnerReq({ merchantId: creds.live.merchant.merchantId, amount: '1' }));
    expectError(res, 403, 'forbidden');
    expect(res.json.error.message).toMatch(/live environment; use a live partner key/);
    const live = await send(
      'POST',
      '/v1/partner/payments',
      partnerReq({ merchantId: creds.live.merchant.merchantId, amount: '1' }, { key: creds.live.partner.apiKey, secret: creds.live.partner.signingSecret }),
    );
    expect(live.status).toBe(201);
    expect(live.json).toMatchObject({ environment: 'live', merchantId: creds.live.merchant.merchantId });
  });

  it('the same Idempotency-Key under the test and the live partner key makes two payments', async () => {
    const idem = randomUUID();
    const test = await send('POST', '/v1/partner/payments', partnerReq({ merchantId: creds.test.merchant.merchantId, amount: '1' }, { idem }));
    const live = await send(
      'POST',
      '/v1/partner/payments',
      partnerReq(
        { merchantId: creds.live.merchant.merchantId, amount: '1' },
        { idem, key: creds.live.partner.apiKey, secret: creds.live.partner.signingSecret },
      ),
    );
    expect([test.status, live.status]).toEqual([201, 201]);
    expect(live.json.id).not.toBe(test.json.id);
  });
});

describe('404 not_found', () => {
  // a 403 here told a key that another merchant's record existed.
  it("a live key asking for another merchant's test payment or invoice gets 404 not_found, as for an unknown id", async () => {
    const payment = await send('POST', '/v1/payments', merchantReq({ amount: '1' }));
    const invoice = await send('POST', '/v1/invoices', invoiceReq({ amount: '1' }));
    expect([payment.status, invoice.status]).toEqual([201, 201]);
    const asLive = { key: creds.live.merchant.apiKey, secret: creds.live.merchant.signingSecret };
    const known = await send('GET', `/v1/payments/${payment.json.id}`, asLive);
    const unknown = await send('GET', `/v1/payments/${randomUUID()}`, asLive);
    expectError(known, 404, 'not_found');
    expectError(unknown, 404, 'not_found');
    expectError(await send('GET', `/v1/invoices/${invoice.json.id}`, { key: creds.live.merchant.invoiceKey }), 404, 'not_found');
    // And the other way round.
    const live = await send('POST', '/v1/payments', { ...asLive, body: '{"amount":"1"}' });
    expectError(await send('GET', `/v1/payments/${live.json.id}`, merchantReq()), 404, 'not_found');
  });

  it('for unknown routes, unknown ids, malformed ids and other merchants', async () => {
    expectError(await send('GET', '/v1/nothing-here'), 404, 'not_found');
    expectError(await send('DELETE' as 'GET', '/v1/payments'), 404, 'not_found');
    expectError(await send('GET', `/v1/payments/${randomUUID()}`, merchantReq()), 404, 'not_found');
    expectError(await send('GET', '/v1/payments/not-a-uuid', merchantReq()), 404, 'not_found');
    expectError(await send('GET', `/v1/invoices/${randomUUID()}`, invoiceReq()), 404, 'not_found');
    expectError(await send('POST', '/v1/partner/payments', partnerReq({ merchantId: randomUUID(), amount: '1' })), 404, 'not_found');
    expectError(await send('POST', `/sandbox/invoices/${randomUUID()}/expire`, { body: '{}' }), 404, 'not_found');
    expectError(await send('GET', `/checkout/${randomUUID()}`), 404, 'not_found');
  });
});

describe('422', () => {
  it('token_not_available, network_not_available, idempotency_key_reused', async () => {
    expectError(await send('POST', '/v1/payments', merchantReq({ amount: '1', token: 'DAI' })), 422, 'token_not_available');
    expectError(await send('POST', '/v1/payments', merchantReq({ amount: '1', networkId: 3448148188, token: 'USDC' })), 422, 'token_not_available');
    expectError(await send('POST', '/v1/payments', merchantReq({ amount: '1', networkId: 728126428 })), 422, 'network_not_available');
    expectError(await send('POST', '/v1/invoices', invoiceReq({ amount: '1', networkId: 56 })), 422, 'network_not_available');
    const idem = randomUUID();
    expect((await send('POST', '/v1/invoices', invoiceReq({ amount: '1' }, { idem }))).status).toBe(201);
    expectError(await send('POST', '/v1/invoices', invoiceReq({ amount: '2' }, { idem })), 422, 'idempotency_key_reused');
  });
});

// the sandbox's shapes must be readable by the client, null-free, on every path.
describe('what the sandbox sends is what the client reads', () => {
  it('a payment and an invoice with nothing optional given, moved through deposit and expiry, stay readable', async () => {
    const payment = await send('POST', '/v1/payments', merchantReq({ amount: '10' }));
    const invoice = await send('POST', '/v1/invoices', invoiceReq({ amount: '10' }));
    for (const field of ['token', 'referenceId', 'email', 'successUrl', 'cancelUrl']) expect(payment.json, field).not.toHaveProperty(field);
    expect((await send('POST', `/sandbox/payments/${payment.json.id}/deposit`, { body: '{"amount":"4"}' })).status).toBe(200);
    expect((await send('POST', `/sandbox/payments/${payment.json.id}/expire`, { body: '{}' })).status).toBe(200);
    expect((await send('POST', `/sandbox/invoices/${invoice.json.id}/deposit`, { body: '{"amount":"12"}' })).status).toBe(200);
    const detail = await send('GET', `/v1/invoices/${invoice.json.id}`, invoiceReq());
    expect(detail.json.payments).toHaveLength(1);
    expect(detail.json.settlements).toHaveLength(1);
    expect((await send('GET', `/v1/payments/${payment.json.id}`, merchantReq())).json).toMatchObject({ status: 'PARTIALLY_PAID', amountReceived: '4' });
  });

  it("every event the sandbox emitted parses with the client's event schema, unchanged and null-free", () => {
    const events = sandbox.events();
    expect(events.length).toBeGreaterThan(10);
    for (const event of events) {
      const parsed = parseEventEnvelope(event);
      if (!parsed.success) expect.fail(`${event.type} ${event.id}: ${JSON.stringify(parsed.error.issues)}`);
      expect(parsed.data).toStrictEqual(event);
      expect(nullPaths(event), event.type).toEqual([]);
    }
  });

  it('every spec answer of this suite was checked against the client schemas', () => {
    expect(checkedResponses).toBeGreaterThan(60);
  });
});

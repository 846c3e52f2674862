import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultRequestSigner } from '../../src/client/signer.js';
import { ErrorObjectSchema } from '../../src/schemas/index.js';
import type { SandboxCredentials, SandboxHandle } from '../../src/sandbox/index.js';
import { api, cleanup, openSandbox, readCredentials, readState } from './helpers.js';

// Random bodies against every POST endpoint: never a 500, always the error object on 4xx, and a
// request either stores one whole record or changes nothing.

let sandbox: SandboxHandle;
let creds: SandboxCredentials;
let paymentId: string;
let invoiceId: string;
// Separate resources for expire, so deposits by the deposit fuzzing do not make them unexpirable.
let expirePaymentId: string;
let expireInvoiceId: string;

beforeAll(async () => {
  sandbox = await openSandbox();
  creds = await readCredentials(sandbox);
  const payment = () =>
    api(sandbox, 'POST', '/v1/payments', { key: creds.test.merchant.apiKey, secret: creds.test.merchant.signingSecret, body: { amount: '10' } });
  const invoice = () => api(sandbox, 'POST', '/v1/invoices', { key: creds.test.merchant.invoiceKey, body: { amount: '10' } });
  const [a, b, c, d] = await Promise.all([payment(), invoice(), payment(), invoice()]);
  [paymentId, invoiceId, expirePaymentId, expireInvoiceId] = [a!.body.id, b!.body.id, c!.body.id, d!.body.id];
});
afterAll(cleanup);

const FIELDS = [
  'amount',
  'email',
  'token',
  'networkId',
  'referenceId',
  'successUrl',
  'cancelUrl',
  'merchantId',
  'externalTenantId',
  'name',
  'environment',
  '__proto__',
  'constructor',
  'x',
];
const value = fc.oneof(
  fc.string(),
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constantFrom(
    '10.50',
    '0',
    '-1',
    '1e3',
    '0.0000000000000000001',
    '1'.repeat(80),
    'USDT',
    'DAI',
    'a@b.co',
    'https://x.example',
    '9b2f6b5e-9c1d-4d8e-8f7a-2b6c1d0e9f3a',
  ),
  fc.array(fc.string(), { maxLength: 3 }),
  fc.dictionary(fc.string(), fc.string(), { maxKeys: 2 }),
);
const randomBody = fc.oneof(
  fc.dictionary(fc.constantFrom(...FIELDS), value, { maxKeys: 6 }).map((o) => JSON.stringify(o)),
  fc.json(),
  fc.string(),
  fc.string().map((s) => `{"amount":${s}`),
  fc.constant(''),
);

/** Mostly `good`, sometimes anything. */
const mostly = (good: fc.Arbitrary<unknown>) => fc.oneof({ arbitrary: good, weight: 5 }, { arbitrary: value, weight: 1 });

/** Bodies close to valid for one endpoint (its own fields, mostly good values), so creates succeed too. */
function nearValidBody(fields: string[], required: string[]): fc.Arbitrary<string> {
  const values: Record<string, fc.Arbitrary<unknown>> = {
    amount: mostly(
      fc.oneof(
        fc.tuple(fc.integer({ min: 0, max: 100_000 }), fc.integer({ min: 0, max: 999_999 })).map(([i, f]) => `${i}.${f}`),
        fc.constantFrom('1', '0.000001', '99999999999999999999.123456789012345678'),
      ),
    ),
    email: mostly(fc.constantFrom('buyer@example.com', 'a.b+c@shop.example', 'x@y.co')),
    token: fc.constantFrom('USDT', 'USDC', 'usdt', 'DAI', ''),
    networkId: fc.constantFrom(11155111, 3448148188, 11155111, 3448148188, 1, 56, -1, 1.5, 2 ** 60),
    referenceId: mostly(fc.string({ minLength: 1, maxLength: 40 })),
    successUrl: mostly(fc.webUrl()),
    cancelUrl: mostly(fc.webUrl()),
    merchantId: mostly(fc.oneof({ arbitrary: fc.constant(creds.test.merchant.merchantId), weight: 4 }, { arbitrary: fc.uuid(), weight: 1 })),
    externalTenantId: mostly(fc.string({ minLength: 1, maxLength: 40 })),
    name: mostly(fc.string({ minLength: 1, maxLength: 40 })),
  };
  return fc.record(Object.fromEntries(fields.map((f) => [f, values[f]!])), { requiredKeys: required }).map((o) => JSON.stringify(o));
}

const contentType = fc.oneof(
  { arbitrary: fc.constant<string | undefined>('application/json'), weight: 6 },
  {
    arbitrary: fc.constantFrom<string | undefined>('application/json; charset=utf-8', 'text/plain', 'application/x-www-form-urlencoded', undefined),
    weight: 1,
  },
);

interface Target {
  path: () => string;
  auth: () => { key?: string; secret?: string; idempotent?: boolean };
  fields: string[];
  required: string[];
}

const PAYMENT_FIELDS = ['amount', 'email', 'token', 'networkId', 'referenceId', 'successUrl', 'cancelUrl'];
const targets: Record<string, Target> = {
  'POST /v1/partner/merchants': {
    path: () => '/v1/partner/merchants',
    auth: () => ({ key: creds.test.partner.apiKey, secret: creds.test.partner.signingSecret, idempotent: true }),
    fields: ['externalTenantId', 'email', 'name'],
    required: ['externalTenantId', 'email', 'name'],
  },
  'POST /v1/partner/payments': {
    path: () => '/v1/partner/payments',
    auth: () => ({ key: creds.test.partner.apiKey, secret: creds.test.partner.signingSecret, idempotent: true }),
    fields: ['merchantId', ...PAYMENT_FIELDS],
    required: ['merchantId', 'amount'],
  },
  'POST /v1/payments': {
    path: () => '/v1/payments',
    auth: () => ({ key: creds.test.merchant.apiKey, secret: creds.test.merchant.signingSecret }),
    fields: PAYMENT_FIELDS,
    required: ['amount'],
  },
  'POST /v1/invoices': {
    path: () => '/v1/invoices',
    auth: () => ({ key: creds.test.merchant.invoiceKey }),
    fields: ['amount', 'networkId', 'token', 'referenceId', 'successUrl', 'cancelUrl'],
    required: ['amount'],
  },
  'POST /sandbox/payments/{id}/deposit': {
    path: () => `/sandbox/payments/${paymentId}/deposit`,
    auth: () => ({}),
    fields: ['amount', 'networkId', 'token'],
    required: ['amount'],
  },
  'POST /sandbox/payments/{id}/expire': { path: () => `/sandbox/payments/${expirePaymentId}/expire`, auth: () => ({}), fields: [], required: [] },
  'POST /sandbox/invoices/{id}/deposit': {
    path: () => `/sandbox/invoices/${invoiceId}/deposit`,
    auth: () => ({}),
    fields: ['amount', 'networkId', 'token'],
    required: ['amount'],
  },
  'POST /sandbox/invoices/{id}/expire': { path: () => `/sandbox/invoices/${expireInvoiceId}/expire`, auth: () => ({}), fields: [], required: [] },
};

let counter = 0;

async function snapshot() {
  const state = await readState(sandbox);
  return JSON.stringify([state.payments, state.invoices, state.merchants, state.idempotency]);
}

async function counts() {
  const state = await readState(sandbox);
  return state.payments.length + state.invoices.length + state.merchants.length;
}

describe.each(Object.entries(targets))('%s', (_name, target) => {
  it('answers random bodies without a 500 and without half-stored records', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(randomBody, nearValidBody(target.fields, target.required), nearValidBody(target.fields, target.required)),
        contentType,
        async (raw, type) => {
          const path = target.path();
          const auth = target.auth();
          const headers: Record<string, string> = {};
          if (type) headers['content-type'] = type;
          if (auth.key) headers.authorization = `Bearer ${auth.key}`;
          if (auth.secret) headers['x-request-signature'] = defaultRequestSigner({ method: 'POST', path, body: raw, secret: auth.secret });
          if (auth.idempotent) headers['idempotency-key'] = `fuzz-${++counter}`;
          const before = await snapshot();
          const countBefore = await counts();
          const response = await fetch(`${sandbox.url}${path}`, { method: 'POST', headers, body: raw });
          const text = await response.text();
          expect(response.status, text).toBeLessThan(500);
          if (response.status >= 400) {
            expect(ErrorObjectSchema.safeParse(JSON.parse(text)).success, text).toBe(true);
            expect(await snapshot()).toBe(before);
          } else {
            const created = JSON.parse(text) as Record<string, unknown>;
            expect(typeof (created.id ?? created.merchantId)).toBe('string');
            // A create adds exactly one record; a simulation adds none.
            expect(await counts()).toBe(countBefore + (path.startsWith('/v1/') ? 1 : 0));
          }
        },
      ),
      { numRuns: 80 },
    );
  });
});

import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_NETWORKS, type SandboxCredentials, type SandboxHandle } from '../../src/sandbox/index.js';
import type { Environment } from '../../src/schemas/index.js';
import { decimalString } from '../support/arbitraries.js';
import { api, cleanup, openSandbox, readCredentials, simulate } from './helpers.js';

// The hosted page at every `checkoutUrl`, through a real sandbox on 127.0.0.1: it renders for any
// amount, any route the sandbox offers and any money received, and its progress bar is the share
// received, rounded down.

let sandbox: SandboxHandle;
let creds: SandboxCredentials;

beforeAll(async () => {
  sandbox = await openSandbox();
  creds = await readCredentials(sandbox);
});
afterAll(cleanup);

type Limits = { networkId?: number; token?: string };

/** No limit, each network alone, each token alone, and each (network, token) pair the sandbox offers in `environment`. */
function limitsOf(environment: Environment): Limits[] {
  const networks = DEFAULT_NETWORKS[environment];
  const tokens = [...new Set(networks.flatMap((n) => n.tokens.map((t) => t.symbol)))];
  return [
    {},
    ...networks.map((n) => ({ networkId: n.networkId })),
    ...tokens.map((token) => ({ token })),
    ...networks.flatMap((n) => n.tokens.map((t) => ({ networkId: n.networkId, token: t.symbol }))),
  ];
}

const ROUTES = (['test', 'live'] as const).flatMap((environment) => limitsOf(environment).map((limits) => ({ environment, limits })));

/** Units of 10^-18: exact for every amount the sandbox takes (at most 18 decimals). */
function units(amount: string): bigint {
  const [integer = '0', fraction = ''] = amount.split('.');
  return BigInt(integer + fraction.padEnd(18, '0'));
}

/** The share of `amount` received, in whole percent rounded down, at most 100. */
function expectedPercent(amount: string, received: string[]): number {
  const total = received.reduce((sum, value) => sum + units(value), 0n);
  const percent = (total * 100n) / units(amount);
  return Number(percent > 100n ? 100n : percent);
}

async function create(kind: 'payment' | 'invoice', environment: Environment, amount: string, limits: Limits): Promise<{ id: string; checkoutUrl: string }> {
  const merchant = creds[environment].merchant;
  const created =
    kind === 'payment'
      ? await api(sandbox, 'POST', '/v1/payments', {
          key: merchant.apiKey,
          secret: merchant.signingSecret,
          body: { amount, email: 'buyer@example.com', ...limits },
        })
      : await api(sandbox, 'POST', '/v1/invoices', { key: merchant.invoiceKey, body: { amount, ...limits } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return created.body;
}

/** GET the page and the state it polls; both must answer 200. */
async function render(checkoutUrl: string): Promise<{ html: string; state: { amount: string; amountReceived: string; percent: number; paid: boolean } }> {
  const page = await fetch(checkoutUrl);
  const html = await page.text();
  expect(page.status, html.slice(0, 300)).toBe(200);
  expect(page.headers.get('content-type')).toMatch(/^text\/html/);
  const state = await fetch(`${checkoutUrl}/state`);
  expect(state.status).toBe(200);
  return { html, state: await state.json() };
}

const positive = decimalString({ maxUnits: 10n ** 24n }).filter((value) => units(value) > 0n);

describe('hosted checkout page', () => {
  it('renders a 42.10 payment open to every route after deposits whose share of the amount has no finite decimal form', async () => {
    const payment = await create('payment', 'test', '42.10', {});
    expect((await render(payment.checkoutUrl)).state.percent).toBe(0);
    expect((await simulate(sandbox, `/sandbox/payments/${payment.id}/deposit`, { amount: '10' })).status).toBe(200);
    const partly = await render(payment.checkoutUrl);
    expect(partly.state).toMatchObject({ amountReceived: '10.00', percent: 23, paid: false });
    expect(partly.html).toContain('<dd id="received">10.00</dd>');
    expect(partly.html).toContain('<div id="bar" style="width:23%">');
    expect((await simulate(sandbox, `/sandbox/payments/${payment.id}/deposit`, { amount: '40' })).status).toBe(200);
    expect((await render(payment.checkoutUrl)).state).toMatchObject({ amountReceived: '50.00', percent: 100, paid: true });
  });

  it('renders 200 for any amount, every route the sandbox offers and any deposits, with the share received rounded down', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('payment' as const, 'invoice' as const),
        fc.constantFrom(...ROUTES),
        positive,
        fc.array(positive, { minLength: 0, maxLength: 3 }),
        async (kind, { environment, limits }, amount, deposits) => {
          const resource = await create(kind, environment, amount, limits);
          // Deposits are simulated in the test environment only.
          const received = environment === 'test' ? deposits : [];
          for (const deposit of received) {
            const answer = await simulate(sandbox, `/sandbox/${kind}s/${resource.id}/deposit`, { amount: deposit });
            expect(answer.status, JSON.stringify(answer.body)).toBe(200);
          }
          const { html, state } = await render(resource.checkoutUrl);
          expect(html).toContain(`<span id="amount">${amount}</span>`);
          const percent = expectedPercent(amount, received);
          expect(state.percent).toBe(percent);
          expect(state.paid).toBe(percent === 100);
        },
      ),
      { numRuns: 100 },
    );
  });
});

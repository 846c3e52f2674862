import { existsSync } from 'node:fs';
import Fastify, { type FastifyInstance } from 'fastify';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CheckoutClient } from '../../src/client/index.js';
import type { SandboxHandle } from '../../src/sandbox/index.js';
import { listenOnLoopback } from '../support/ports.js';
import { cleanup, openSandbox, readCredentials } from './helpers.js';

// A real headless Chromium (the system one: never downloaded) on the hosted checkout page.
const CHROMIUM = '/usr/bin/chromium';
const SCREENSHOT = '/tmp/checkout-page.png';

let browser: Browser;
let sandbox: SandboxHandle;
let client: CheckoutClient;
let shop: FastifyInstance;
let shopUrl: string;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install chromium (apt-get install chromium) to run the browser test`);
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  sandbox = await openSandbox();
  const creds = await readCredentials(sandbox);
  client = new CheckoutClient({
    baseUrl: creds.baseUrl,
    apiKey: creds.test.merchant.apiKey,
    signingSecret: creds.test.merchant.signingSecret,
    invoiceKey: creds.test.merchant.invoiceKey,
    retries: 0,
  });
  // The merchant's shop: where the success and cancel links lead.
  shop = Fastify();
  shop.get('/thanks', async (request, reply) =>
    reply.type('text/html').send(`<h1 id="thanks">Thank you for order ${(request.query as { order?: string }).order}</h1>`),
  );
  shop.get('/cancelled', async (_request, reply) => reply.type('text/html').send('<h1>Cancelled</h1>'));
  shopUrl = `http://127.0.0.1:${await listenOnLoopback(shop)}`;
});

afterAll(async () => {
  await browser?.close();
  await shop?.close();
  await cleanup();
});

describe('hosted checkout page in Chromium', () => {
  it('pays partially, then fully, shows PAID live and follows the success link to the shop', async () => {
    const payment = await client.payments.create({
      amount: '25.00',
      email: 'buyer@example.com',
      referenceId: 'order-77',
      successUrl: `${shopUrl}/thanks?order=77`,
      cancelUrl: `${shopUrl}/cancelled`,
    });
    const page = await browser.newPage({ viewport: { width: 900, height: 1000 } });
    await page.goto(payment.checkoutUrl!);

    await expect.poll(() => page.locator('#status').getAttribute('data-status')).toBe('CREATED');
    expect(await page.locator('#amount').textContent()).toBe('25.00');
    expect(await page.locator('#remaining').textContent()).toBe('25.00');
    expect(await page.locator('#qr svg').first().isVisible()).toBe(true);
    // Three choices on testnets: Sepolia USDT and USDC, Tron Nile USDT.
    expect(await page.locator('input[name="route"]').count()).toBe(3);
    const firstAddress = await page.locator('#address').textContent();
    expect(firstAddress).toMatch(/^0x[0-9a-f]{40}$/);
    await page.locator('label.option', { hasText: 'Tron Nile' }).click();
    expect(await page.locator('#address').textContent()).toMatch(/^T[1-9A-HJ-NP-Za-km-z]{33}$/);
    expect(await page.locator('#cancel-link').getAttribute('href')).toBe(`${shopUrl}/cancelled`);

    await page.locator('#pay-half').click();
    await expect.poll(() => page.locator('#status').getAttribute('data-status')).toBe('PARTIALLY_PAID');
    expect(await page.locator('#received').textContent()).toBe('12.50');
    expect(await page.locator('#remaining').textContent()).toBe('12.50');
    expect(await page.locator('#status').textContent()).toBe('Partially paid');
    expect(await page.locator('#success-link').isVisible()).toBe(false);
    // The note is set when the button's own request answers, which the live status update can beat.
    await expect.poll(() => page.locator('#sim-note').textContent()).toBe('Simulated a deposit of 12.50 USDT on Tron Nile.');
    await page.screenshot({ path: SCREENSHOT, fullPage: true });

    await page.locator('#pay-full').click();
    await expect.poll(() => page.locator('#status').getAttribute('data-status')).toBe('PAID');
    expect(await page.locator('#received').textContent()).toBe('25.00');
    expect(await page.locator('#remaining').textContent()).toBe('0.00');
    expect(await client.payments.get(payment.id)).toMatchObject({ status: 'PAID', amountReceived: '25.00' });
    expect(sandbox.events().map((e) => e.type)).toEqual(['payment.created', 'payment.partially_paid', 'payment.paid']);

    await page.screenshot({ path: '/tmp/checkout-page-paid.png', fullPage: true });
    await page.locator('#success-link').click();
    await page.waitForURL(`${shopUrl}/thanks?order=77`);
    expect(await page.locator('#thanks').textContent()).toBe('Thank you for order 77');
    await page.close();
  });

  it('updates live when money arrives from elsewhere (polling)', async () => {
    const invoice = await client.invoices.create({ amount: '8' });
    const page = await browser.newPage();
    await page.goto(invoice.checkoutUrl!);
    await expect.poll(() => page.locator('#status').getAttribute('data-status')).toBe('CREATED');
    const response = await fetch(`${sandbox.url}/sandbox/invoices/${invoice.id}/deposit`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"amount":"9"}',
    });
    expect(response.status).toBe(200);
    await expect.poll(() => page.locator('#status').getAttribute('data-status')).toBe('OVERPAID');
    expect(await page.locator('#surplus').textContent()).toBe('1');
    expect(await page.locator('#surplus-row').isVisible()).toBe(true);
    await page.close();
  });
});

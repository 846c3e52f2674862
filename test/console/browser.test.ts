import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PassThrough } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openRuntime, type Runtime } from '../../src/cli/runtime.js';
import { buildServeApp } from '../../src/cli/serve-app.js';
import { LOCAL_TIMES_SCRIPT } from '../../src/console/local-times.js';
import type { SandboxHandle } from '../../src/sandbox/index.js';
import { createVerifier, signWebhook } from '../../src/webhooks/index.js';
import { cleanup, openSandbox, simulate, startReceiver, tempDir, type Receiver } from '../sandbox/helpers.js';
import { eventually, freePort } from '../support/ports.js';

// the console in a real headless Chromium (the system one, never downloaded) against a
// store fed by the sandbox through a real serve app: the overview matches the store, a failed run
// is retried from the page and completes once, a replay is sent, markup in a body stays text, and
// a browser, on this machine or elsewhere, is refused until it signs in with the token.
const CHROMIUM = '/usr/bin/chromium';
// The README's screenshots: written only when asked (`CONSOLE_SCREENSHOTS=1`), so a test run never
// changes the checkout; `.assets/` because the repo's top level is fixed by the contract.
const DOCS = fileURLToPath(new URL('../../.assets/', import.meta.url));
async function screenshot(target: { screenshot(options: { path: string; fullPage: boolean }): Promise<unknown> }, name: string): Promise<void> {
  if (process.env.CONSOLE_SCREENSHOTS !== '1') return;
  await mkdir(DOCS, { recursive: true });
  await target.screenshot({ path: join(DOCS, name), fullPage: true });
}
const TOKEN = 'console-token-for-the-browser-test-7c1f03d9a2';

const HANDLERS = `
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
const broken = new URL('./broken', import.meta.url);
export default {
  async paid(payment, ctx) {
    if (existsSync(broken)) throw new Error(readFileSync(broken, 'utf8') || 'warehouse API offline (HTTP 503)');
    appendFileSync(new URL('./calls.log', import.meta.url), ctx.key + '\\n');
  },
};
`;

/** An address of this machine that is not loopback, when it has one (requests to it are "off loopback"). */
function outsideAddress(): string | undefined {
  for (const entries of Object.values(networkInterfaces()))
    for (const entry of entries ?? []) if (entry.family === 'IPv4' && !entry.internal) return entry.address;
  return undefined;
}

let browser: Browser;
/** Signed in with the token: every page the tests open, unless they test the refusal. */
let signedIn: BrowserContext;
let sandbox: SandboxHandle;
let runtime: Runtime;
let app: FastifyInstance;
let base: string;
let port: number;
let dir: string;
let sink: Receiver;
const payments: Record<'paid' | 'failed' | 'partial', string> = { paid: '', failed: '', partial: '' };

const calls = async () => (existsSync(join(dir, 'calls.log')) ? (await readFile(join(dir, 'calls.log'), 'utf8')).trim().split('\n') : []);

async function payment(amount: string, referenceId: string, pay: string | undefined): Promise<string> {
  const created = await runtime.client!.payments.create({ amount, email: 'alice.buyer@example.com', referenceId });
  if (pay) expect((await simulate(sandbox, `/sandbox/payments/${created.id}/deposit`, { amount: pay })).status).toBe(200);
  return created.id;
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install chromium (apt-get install chromium) to run the browser test`);
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  dir = await tempDir('ck-console-browser-');
  await writeFile(join(dir, 'fulfillment.mjs'), HANDLERS);
  port = await freePort();
  sandbox = await openSandbox({ webhookUrls: [`http://127.0.0.1:${port}/webhooks/checkout`] });
  const { merchant } = sandbox.credentials.test;
  const env = {
    CHECKOUT_BASE_URL: sandbox.url,
    CHECKOUT_API_KEY: merchant.apiKey,
    CHECKOUT_SIGNING_SECRET: merchant.signingSecret,
    CHECKOUT_INVOICE_KEY: merchant.invoiceKey,
    CHECKOUT_WEBHOOK_SECRET: sandbox.credentials.webhookSecret,
    CHECKOUT_STORE: `file:${join(dir, 'store')}`,
    CHECKOUT_CONSOLE_TOKEN: TOKEN,
    LOG_LEVEL: 'error',
  };
  runtime = await openRuntime({ stdout: new PassThrough(), stderr: new PassThrough(), env, cwd: dir }, { handlers: true, engine: { maxAttempts: 1 } });
  // The due-run sweep is slow here: a retried run completes because the page asked for it.
  ({ app } = await buildServeApp(runtime, { publicUrl: `http://127.0.0.1:${port}`, console: true, verificationFlushMs: 100 }));
  await app.listen({ port, host: '0.0.0.0' });
  base = `http://127.0.0.1:${port}`;
  sink = await startReceiver();

  payments.paid = await payment('25.00', 'order-1001', '25.00');
  await eventually(async () => ((await runtime.store.getRun(`payment:${payments.paid}:paid`))?.status === 'done' ? true : undefined));
  await writeFile(join(dir, 'broken'), '');
  payments.failed = await payment('40.00', 'order-1002 <img src=x onerror="window.__pwned=1">', '40.00');
  payments.partial = await payment('12.50', 'order-1003', '5');
  await eventually(async () => ((await runtime.store.getRun(`payment:${payments.failed}:paid`))?.status === 'failed' ? true : undefined));
  await eventually(async () => ((await runtime.store.getResource('payment', payments.paid))?.outcome === 'paid' ? true : undefined));
  await sandbox.webhooksIdle();
  // Two forged deliveries: counted as verification failures.
  for (const id of ['evt_forged_1', 'evt_forged_2']) {
    const forged = await fetch(`${base}/webhooks/checkout`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...signWebhook({ id, body: '{}', secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' }) },
      body: '{}',
    });
    expect(forged.status).toBe(401);
  }
  await eventually(async () => ((await runtime.store.summarize({ now: runtime.engine.clock() })).dispatch.pending === 0 ? true : undefined));
  await eventually(async () => ((await runtime.store.listActivity({ subject: 'receiver' })).length > 0 ? true : undefined));
  signedIn = await browser.newContext({ viewport: { width: 1366, height: 900 } });
  await signIn(signedIn);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await app?.close();
  await runtime?.close();
  await sink?.close();
  await cleanup();
});

/** Sign `context` in on this machine as an operator does: the refused page is the sign-in form. */
async function signIn(context: BrowserContext): Promise<void> {
  const page = await context.newPage();
  expect((await page.goto(`${base}/checkout-kit/`))?.status()).toBe(401);
  await page.locator('#token').fill(TOKEN);
  await Promise.all([page.waitForSelector('[data-count="events-last-day"]'), page.locator('button[type=submit]').click()]);
  await page.close();
}

async function open(url: string): Promise<Page> {
  const page = await signedIn.newPage();
  page.on('dialog', (dialog) => {
    throw new Error(`a stored body ran a script: ${dialog.message()}`);
  });
  const response = await page.goto(url);
  expect(response?.status(), url).toBe(200);
  return page;
}

const LONG_ERROR =
  'warehouse API offline (HTTP 503) while reserving stock: POST https://warehouse.internal.example/api/v2/reservations/order-2031-03-04-EU-web-shop-basket-7f3a9c2e?include=lines,shipping ' +
  'timed out after 30000 ms; the carrier said "no capacity in region eu-central-1 until the next dispatch window", request 0f3c9a7e-5b21-4d8e-9a61-2c7d4e8b1f90';

/**
 * The layout promises, read from the rendered page: it is no wider than the window; no word is
 * split over two lines (a break after a hyphen is a word's own); every table is in its scroll box
 * and nothing spills out of its card;
 * every id is one box with its whole value in `title`.
 */
async function fits(page: Page, label: string): Promise<void> {
  // Closed <details> (dead letters' bodies) are opened: their content must fit too.
  await page.locator('details').evaluateAll((elements) => elements.forEach((element) => element.setAttribute('open', '')));
  const layout = await page.evaluate(() => {
    const split: string[] = [];
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    const range = document.createRange();
    for (let node = walker.nextNode() as Text | null; node; node = walker.nextNode() as Text | null) {
      // Ids are one line by construction; their ellipsised text is measured as two pieces.
      if (node.parentElement?.closest('pre, script, style, .id')) continue;
      for (const word of node.data.matchAll(/[^\s-]+-?/g)) {
        range.setStart(node, word.index);
        range.setEnd(node, word.index + word[0].length);
        if (Array.from(range.getClientRects()).filter((rect) => rect.width > 0).length > 1) split.push(word[0]);
      }
    }
    return {
      scrollWidth: document.documentElement.scrollWidth,
      innerWidth: window.innerWidth,
      split,
      loose: document.querySelectorAll('table:not(.scroll > table)').length,
      spilling: Array.from(document.querySelectorAll('.card, .notice'), (box) =>
        box.scrollWidth > box.clientWidth ? box.textContent?.slice(0, 60) : undefined,
      ).filter(Boolean),
      idsWithoutTitle: Array.from(document.querySelectorAll('.id')).filter(
        (element) => element.getAttribute('title') !== element.textContent || element.getClientRects().length !== 1,
      ).length,
    };
  });
  expect(layout.scrollWidth, label).toBeLessThanOrEqual(layout.innerWidth);
  expect(layout.split, label).toEqual([]);
  expect(layout.loose, label).toBe(0);
  expect(layout.spilling, label).toEqual([]);
  expect(layout.idsWithoutTitle, label).toBe(0);
}

const count = async (page: Page, name: string) => Number(((await page.locator(`[data-count="${name}"]`).textContent()) ?? '').replace(/,/g, ''));

describe('operator console in Chromium', () => {
  it('shows on the overview what the store holds', async () => {
    const page = await open(`${base}/checkout-kit/`);
    const summary = await runtime.store.summarize({ now: runtime.engine.clock() });
    const sum = (key: 'lastHour' | 'lastDay') => summary.eventsByType.reduce((total, row) => total + row[key], 0);
    expect(await count(page, 'events-last-hour')).toBe(sum('lastHour'));
    expect(await count(page, 'events-last-day')).toBe(sum('lastDay'));
    expect(sum('lastHour')).toBeGreaterThanOrEqual(6);
    const table = await page
      .locator('#events-by-type tr[data-type]')
      .evaluateAll((rows) =>
        rows.map((row) => ({ type: row.getAttribute('data-type'), cells: Array.from(row.querySelectorAll('td.num'), (cell) => cell.textContent) })),
      );
    expect(table).toEqual(summary.eventsByType.map((row) => ({ type: row.type, cells: [String(row.lastHour), String(row.lastDay)] })));
    expect(await count(page, 'verification-last-hour')).toBe(2);
    expect(await page.locator('#verification-by-reason tr[data-reason="bad_signature"] td.num').first().textContent()).toBe('2');
    expect(await count(page, 'backlog')).toBe(summary.dispatch.pending + summary.dispatch.running);
    expect(await count(page, 'runs-failed')).toBe(summary.fulfillment.failed);
    expect(summary.fulfillment.failed).toBe(1);
    expect(await count(page, 'open-payments')).toBe(summary.open.payment);
    expect(summary.open.payment).toBe(1);
    expect(await count(page, 'learned-by-reconcile')).toBe(0);
    expect(await page.locator('#retry-all').isVisible()).toBe(true);
    expect(await page.locator('#last-pass').textContent()).toContain('No reconcile pass recorded yet');

    // Reconcile now, from the page: confirmed, run in this process, recorded, shown.
    await page.locator('#reconcile-now').click();
    await page.locator('#confirm').click();
    await page.waitForLoadState();
    expect(await page.locator('#result').textContent()).toMatch(
      /^Reconcile pass done in \d+ ms: checked 0, fulfilled 0, missed by webhooks 0, failed 0, awaiting retry 1\.$/,
    );
    await page.goto(`${base}/checkout-kit/`);
    expect(await page.locator('[data-field="pass-result"]').textContent()).toBe('ok');
    expect(await page.locator('[data-field="pass-checked"]').textContent()).toBe('0');
    await page.close();
  });

  it('retries a failed run from the page; its handler completes once, and confirming again does nothing', async () => {
    const key = `payment:${payments.failed}:paid`;
    expect(await calls()).not.toContain(key);
    const page = await open(`${base}/checkout-kit/runs?status=failed`);
    const row = page.locator(`tr[data-key="${key}"]`);
    expect(await row.locator('[data-field="status"]').textContent()).toBe('failed');
    expect(await row.textContent()).toContain('warehouse API offline');
    await row.locator('a.retry').click();
    await page.waitForURL(/\/checkout-kit\/actions\/retry\?key=/);
    expect(await page.locator('#summary').textContent()).toContain(key);
    await rm(join(dir, 'broken'));
    await page.locator('#confirm').click();
    await page.waitForLoadState();
    if ((await page.locator('#result').count()) === 0) throw new Error(`no result page: ${await page.content()}`);
    expect(await page.locator('#result').textContent()).toBe(`Run ${key} is back in line: it runs again now.`);
    await eventually(async () => ((await runtime.store.getRun(key))?.status === 'done' ? true : undefined), 10_000);

    // Back to the confirmation (a fresh one: pages are never cached) and confirmed again: nothing to do.
    await page.goBack();
    await page.locator('#confirm').click();
    await page.waitForLoadState();
    expect(await page.locator('#result').textContent()).toMatch(
      new RegExp(`^Nothing to do: run ${key} is done \\(its handler completed at .*; it never runs again\\)\\.$`),
    );
    await runtime.engine.runDue();
    expect((await calls()).filter((line) => line === key)).toEqual([key]);

    const timeline = await open(`${base}/checkout-kit/payments/${payments.failed}`);
    const entries = await timeline.locator('#timeline tbody tr').allTextContents();
    expect(entries.some((text) => text.includes('paid handler failed for good (attempt 1') && text.includes('warehouse API offline'))).toBe(true);
    expect(entries.some((text) => text.includes('paid handler completed (attempt 1'))).toBe(true);
    expect(await timeline.locator('[data-field="outcome"]').textContent()).toBe('paid (learned by webhook)');
    expect(await timeline.locator('[data-field="received"]').textContent()).toBe('40.00');
    expect(await timeline.locator('[data-field="email"]').textContent()).toContain('a•••@e•••.com');
    expect(await timeline.locator(`tr[data-key="${key}"] [data-field="run-status"]`).textContent()).toBe('done');
    const log = await open(`${base}/checkout-kit/log`);
    expect(await log.locator('#log').textContent()).toContain(`Run ${key} is back in line`);
    await Promise.all([page.close(), timeline.close(), log.close()]);
  });

  it('replays an event to a URL, body byte for byte and signed', async () => {
    const [event] = await runtime.store.listEvents({ resourceId: payments.paid, type: 'payment.paid' });
    expect(event).toBeDefined();
    const page = await open(`${base}/checkout-kit/events/${event!.id}`);
    await page.locator('#replay').click();
    await page.waitForURL(/\/actions\/replay/);
    expect(await page.locator('#url').inputValue()).toBe(`http://127.0.0.1:${port}/webhooks/checkout`);
    expect(await page.content()).not.toContain(sandbox.credentials.webhookSecret);
    await page.locator('#url').fill(sink.url);
    await page.locator('#confirm').click();
    await page.waitForSelector('#result');
    expect(await page.locator('#result').textContent()).toBe(`Event ${event!.id} was sent to ${sink.url}: it answered 200.`);
    expect(sink.received).toHaveLength(1);
    expect(sink.received[0]?.body).toBe(event!.body);
    expect(() =>
      createVerifier({ secrets: [sandbox.credentials.webhookSecret] })({ headers: sink.received[0]!.headers, body: sink.received[0]!.body }),
    ).not.toThrow();
    await page.close();
  });

  it('finds an order from the overview in one search: by its order id it opens the payment, by the e-mail it lists every order of that buyer', async () => {
    const page = await open(`${base}/checkout-kit/`);
    await page.locator('#q').fill('order-1003');
    await Promise.all([page.waitForURL(`**/checkout-kit/payments/${payments.partial}`), page.locator('#search button').click()]);
    expect(await page.locator('[data-field="outcome"]').textContent()).toContain('pending');

    await page.goto(`${base}/checkout-kit/`);
    // Shown masked everywhere, found by the whole address typed in any case.
    await page.locator('#q').fill('Alice.Buyer@Example.com');
    await Promise.all([page.waitForURL('**/checkout-kit/search?q=*'), page.locator('#search button').click()]);
    const rows = page.locator('#resources tbody tr[data-id]');
    expect(new Set(await rows.evaluateAll((list) => list.map((row) => row.getAttribute('data-id'))))).toEqual(
      new Set([payments.paid, payments.failed, payments.partial]),
    );
    // The handler column says what the store says (the retry test before this one may have run it again).
    const run = await runtime.store.getRun(`payment:${payments.failed}:paid`);
    expect(await page.locator(`#resources tr[data-id="${payments.failed}"]`).getAttribute('data-handler')).toBe(run?.status);
    expect(await page.locator(`#resources tr[data-id="${payments.paid}"] [data-field="handler"]`).textContent()).toContain('done');
    expect(await page.content()).not.toContain('alice.buyer@example.com</td>');
    await page.close();
  });

  it('renders markup from stored events as text', async () => {
    // An event of a type the toolkit does not know, with markup in its type and body: stored as sent.
    const body = JSON.stringify({
      id: 'evt_xss',
      type: 'note.added<img src=x onerror="window.__pwned=2">',
      createdAt: new Date().toISOString(),
      environment: 'test',
      data: { text: '</pre><script>window.__pwned = 3</script>' },
    });
    const delivered = await fetch(`${base}/webhooks/checkout`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...signWebhook({ id: 'evt_xss', body, secret: sandbox.credentials.webhookSecret }) },
      body,
    });
    expect(delivered.status).toBe(200);
    for (const url of [
      `${base}/checkout-kit/events/evt_xss`,
      `${base}/checkout-kit/events`,
      `${base}/checkout-kit/payments/${payments.failed}?reveal=1`,
      `${base}/checkout-kit/`,
    ]) {
      const page = await open(url);
      expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned), url).toBeUndefined();
      // The console's own script is the only one.
      expect(await page.locator('script').allTextContents(), url).toEqual([LOCAL_TIMES_SCRIPT]);
      expect(await page.locator('img').count(), url).toBe(0);
      await page.close();
    }
    const event = await open(`${base}/checkout-kit/events/evt_xss`);
    expect(await event.locator('#event-type').textContent()).toBe('note.added<img src=x onerror="window.__pwned=2">');
    expect(await event.locator('#raw-body').textContent()).toContain('</pre><script>window.__pwned = 3</script>');
    await event.close();
  });

  it('refuses a browser until it signs in with the token, on this machine as from elsewhere', async () => {
    const address = outsideAddress();
    // Without another interface, a proxy's forwarding header makes the request come from elsewhere.
    const origins: Array<{ label: string; origin: string; headers: Record<string, string> }> = [
      { label: 'this machine', origin: base, headers: {} },
      { label: 'elsewhere', origin: `http://${address ?? '127.0.0.1'}:${port}`, headers: address ? {} : { 'x-forwarded-for': '198.51.100.23' } },
    ];
    for (const { label, origin, headers } of origins) {
      const page = await browser.newPage();
      await page.setExtraHTTPHeaders(headers);
      const refused = await page.goto(`${origin}/checkout-kit/`);
      expect(refused?.status(), label).toBe(401);
      expect(await page.locator('#refusal').textContent(), label).toMatch(/Missing or wrong console token/);
      expect(await page.content(), label).not.toContain('data-count');
      const metrics = await page.goto(`${origin}/metrics`);
      expect(metrics?.status(), label).toBe(401);
      expect(JSON.parse((await page.locator('body').textContent()) ?? '{}'), label).toMatchObject({ error: { code: 'unauthorized' } });

      await page.goto(`${origin}/checkout-kit/`);
      await page.locator('#token').fill('not-the-token');
      await page.locator('button[type=submit]').click();
      expect(await page.locator('#refusal').textContent(), label).toMatch(/Wrong token/);
      await page.locator('#token').fill(TOKEN);
      await page.locator('button[type=submit]').click();
      await page.waitForSelector('[data-count="events-last-day"]');
      const cookies = await page.context().cookies();
      expect(
        cookies.map((cookie) => [cookie.name, cookie.httpOnly, cookie.sameSite]),
        label,
      ).toEqual([['checkout_kit_console', true, 'Strict']]);
      expect(cookies[0]?.value, label).not.toContain(TOKEN);

      // Signing out from any page ends the session: the console is refused again.
      await page.goto(`${origin}/checkout-kit/payments`);
      await Promise.all([page.waitForSelector('#refusal'), page.locator('#sign-out').click()]);
      expect(await page.context().cookies(), label).toEqual([]);
      expect((await page.goto(`${origin}/checkout-kit/`))?.status(), label).toBe(401);
      await page.close();
    }
  });
  it("fits every page from 390 px to 1366 px: nothing scrolls sideways, no word breaks, one time format in the viewer's zone", async () => {
    // Real data at its widest: a long order id, a long error, an event body, a dead letter, an invoice.
    await writeFile(join(dir, 'broken'), LONG_ERROR);
    const long = await payment('19.99', 'order-2031-03-04-EU-web-shop-basket-7f3a9c2e', '19.99');
    const longKey = `payment:${long}:paid`;
    await eventually(async () => ((await runtime.store.getRun(longKey))?.status === 'failed' ? true : undefined));
    await rm(join(dir, 'broken'));
    const invoice = await runtime.client!.invoices.create({ amount: '8.00', referenceId: 'inv-2031-03-04-EU-web-shop-7f3a9c2e' });
    expect((await simulate(sandbox, `/sandbox/invoices/${invoice.id}/deposit`, { amount: '8.00' })).status).toBe(200);
    await eventually(async () => (await runtime.store.getResource('invoice', invoice.id)) ?? undefined);
    // A platform's tenant at its widest: a long tenant id, name and address.
    const tenantId = 'tenant-2031-eu-web-shop-builder-customer-7f3a9c2e';
    await runtime.store.putTenantMerchant({
      tenantId,
      environment: 'test',
      name: 'Lorem Ipsum Dolor Sit Amet Online Shop GmbH & Co. KG',
      email: 'accounts.payable.department@lorem-ipsum-online-shop.example',
      idempotencyKey: `ck-merchant-${tenantId}`,
      requestHash: 'h',
    });
    await runtime.store.insertDeadLetter({
      receivedAt: new Date().toISOString(),
      reason: 'invalid_json: Unexpected end of JSON input',
      body: `{"id":"evt_cut_short","type":"payment.paid","data":{"note":"${'lorem ipsum '.repeat(60)}`,
      headers: {},
    });
    const [paidEvent] = await runtime.store.listEvents({ resourceId: payments.paid, type: 'payment.paid' });
    // An order the buyer left unpaid, for the return page.
    const order = 'order-2031-03-04-EU-web-shop-basket-unpaid';
    const checkout = await fetch(`${base}/checkout`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ orderId: order, amount: '5.00' }),
      redirect: 'manual',
    });
    expect(checkout.status).toBe(303);

    const root = `${base}/checkout-kit`;
    const pages = [
      `${root}/`,
      `${root}/events`,
      `${root}/events/${paidEvent!.id}`,
      `${root}/events/evt_xss`,
      `${root}/payments`,
      `${root}/payments?handler=failed&amountMin=1&outcome=paid`,
      `${root}/search?q=alice.buyer%40example.com`,
      `${root}/payments/${long}`,
      `${root}/payments/${payments.failed}`,
      `${root}/invoices`,
      `${root}/invoices/${invoice.id}`,
      `${root}/runs`,
      `${root}/runs?status=failed`,
      `${root}/dead-letters`,
      `${root}/merchants`,
      `${root}/log`,
      `${root}/log?subject=reconcile`,
      `${root}/actions/retry?key=${encodeURIComponent(longKey)}`,
      `${root}/actions/retry-all`,
      `${root}/actions/replay?event=${paidEvent!.id}`,
      `${root}/actions/reconcile`,
    ];
    for (const width of [390, 1366]) {
      // A zone without summer time, so the expected local text is fixed.
      const context = await browser.newContext({ viewport: { width, height: 900 }, timezoneId: 'Asia/Kolkata' });
      const strangers = await browser.newContext({ viewport: { width, height: 900 } });
      try {
        await signIn(context);
        const page = await context.newPage();
        for (const url of pages) {
          const response = await page.goto(url);
          expect(response?.status(), url).toBe(200);
          await fits(page, `${url} at ${width} px`);
        }
        // The result page of an action, and the sign-in page a stranger gets.
        await page.goto(`${root}/actions/reconcile`);
        await page.locator('#confirm').click();
        await page.waitForSelector('#result');
        await fits(page, `an action's result at ${width} px`);
        const stranger = await strangers.newPage();
        expect((await stranger.goto(`${root}/`))?.status()).toBe(401);
        await fits(stranger, `the sign-in page at ${width} px`);

        // Times: written in UTC by the server, shown in the viewer's zone, UTC on hover.
        await page.goto(`${root}/payments/${payments.failed}`);
        const times = await page
          .locator('time[data-local]')
          .evaluateAll((elements) =>
            elements.map((element) => ({ at: element.getAttribute('datetime') ?? '', text: element.textContent, title: element.getAttribute('title') })),
          );
        expect(times.length).toBeGreaterThan(3);
        for (const time of times) {
          const utc = new Date(time.at);
          expect(time.title).toBe(`${utc.toISOString().slice(0, 19).replace('T', ' ')} UTC`);
          expect(time.text).toBe(`${new Date(utc.getTime() + 5.5 * 3_600_000).toISOString().slice(0, 19).replace('T', ' ')} GMT+5:30`);
        }
        await screenshot(page, `console-payment-${width}.png`);
        await page.goto(`${root}/`);
        await screenshot(page, `console-overview-${width}.png`);

        // The buyer's return page: the shop's look, fitting a phone, with the way back.
        expect((await page.goto(`${base}/checkout/return?orderId=${encodeURIComponent(order)}`))?.status()).toBe(200);
        expect(await page.locator('h1').getAttribute('data-state')).toBe('pending');
        expect(await page.locator('nav a').first().textContent()).toBe('Back to the payment page');
        expect(await page.locator('#back-to-shop').getAttribute('href')).toBe(`${base}/`);
        await fits(page, `the return page at ${width} px`);
        if (width === 390) await screenshot(page, 'return-page-390.png');
      } finally {
        await context.close();
        await strangers.close();
      }
    }
  });
});

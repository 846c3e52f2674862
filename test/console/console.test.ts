import { createHash } from 'node:crypto';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { checkoutConsole } from '../../src/console/index.js';
import { registerSecret } from '../../src/errors/index.js';
import { MemoryStore, SqliteStore, type Store } from '../../src/store/index.js';
import { loadDriver } from '../../src/store/sqlite/driver.js';
import { eventually } from '../support/ports.js';
import { removeTempDirs, tempDir } from '../support/temp-dirs.js';
import { eventBody, paidPayment, storedEvent, T0, testEngine } from './seed.js';

const apps: FastifyInstance[] = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
  await removeTempDirs();
});

async function consoleApp(store: Store, options: Partial<Parameters<typeof checkoutConsole>[1]> = {}) {
  const app = Fastify();
  apps.push(app);
  await app.register(checkoutConsole, { store, clock: () => new Date(T0), ...options });
  await app.ready();
  return app;
}

/** The `data-count` figures of the overview. */
function figures(page: string): Record<string, number> {
  return Object.fromEntries(
    [...page.matchAll(/data-count="([^"]+)">([\d,]+)</g)].map(([, name, value]) => [name, Number((value as string).replace(/,/g, ''))]),
  );
}

/** A form post as a browser makes it from the console's own page. */
const post = (app: FastifyInstance, url: string, form: Record<string, string>, headers: Record<string, string> = {}) =>
  app.inject({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'http://localhost:80', host: 'localhost:80', ...headers },
    payload: new URLSearchParams(form).toString(),
  });

/** What a result page says, as the operator reads it (a long id in it is an element of its own). */
const resultText = (page: string) => /<p id="result"[^>]*>([\s\S]*?)<\/p>/.exec(page)?.[1]?.replace(/<[^>]+>/g, '');

/** The hidden fields of the confirmation form on a page. */
function confirmForm(page: string): Record<string, string> {
  const form = /<form method="post"[^>]*id="confirm-form">([\s\S]*?)<\/form>/.exec(page)?.[1] ?? '';
  return Object.fromEntries(
    [...form.matchAll(/<input type="(?:hidden|url)"[^>]*name="([^"]+)" value="([^"]*)"/g)].map(([, name, value]) => [
      name,
      (value as string)
        .replace(/&amp;/g, '&')
        .replace(/&#39;/g, "'")
        .replace(/&quot;/g, '"'),
    ]),
  );
}

describe('operator console (fastify, memory store)', () => {
  it("shows the store's counts on the overview", async () => {
    const store = new MemoryStore();
    const handlers = { paid: async () => {}, underpaid: async () => Promise.reject(new Error('refund system down')) };
    const { engine, clock } = testEngine(store, handlers);
    for (let i = 0; i < 3; i++) await paidPayment(store, engine, clock);
    await store.insertEvent(storedEvent({ id: 'evt_created', type: 'payment.created', receivedAt: new Date(T0 - 2 * 3_600_000).toISOString() }), new Date(T0));
    await store.updateResource({ kind: 'payment', id: 'p-open', source: 'checkout' }, new Date(T0));
    await store.updateResource({ kind: 'invoice', id: 'i-missed', outcome: 'paid', source: 'reconcile' }, new Date(T0));
    await store.insertDeadLetter({ receivedAt: new Date(T0).toISOString(), reason: 'invalid_json', body: '{', headers: {} }, new Date(T0));
    await store.enqueueRun({ key: 'payment:p-open:underpaid', kind: 'fulfillment', data: {} }, new Date(T0));
    await store.claimRun('payment:p-open:underpaid', { owner: 'w', leaseMs: 1000, now: new Date(T0) });
    await store.failRun('payment:p-open:underpaid', 'w', { error: 'refund system down', now: new Date(T0) });

    const app = await consoleApp(store);
    const response = await app.inject('/checkout-kit/');
    expect(response.statusCode).toBe(200);
    const summary = await store.summarize({ now: new Date(T0) });
    expect(figures(response.body)).toMatchObject({
      'events-last-hour': 3,
      'events-last-day': 4,
      backlog: summary.dispatch.pending + summary.dispatch.running,
      'runs-failed': 1,
      'open-payments': summary.open.payment,
      'open-invoices': summary.open.invoice,
      'learned-by-reconcile': 1,
      'dead-letters': 1,
    });
    expect(summary.dispatch.pending).toBe(4);
    expect(response.body).toContain('id="retry-all"');
    expect(response.headers['content-security-policy']).toContain("default-src 'none'");
    // The one script on the page is the one whose hash the policy allows (and no other runs).
    const scripts = [...response.body.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((match) => match[1] as string);
    expect(scripts).toHaveLength(1);
    const hash = createHash('sha256').update(scripts[0]!).digest('base64');
    expect(/script-src ([^;]+);/.exec(String(response.headers['content-security-policy']))?.[1]).toBe(`'sha256-${hash}'`);
  });

  it('finds an order from one search box by order id, payment id, e-mail in any case or event id, and lists with amount, received and the handler state', async () => {
    const store = new MemoryStore();
    const { engine, clock } = testEngine(store, { paid: async () => {}, overpaid: async () => Promise.reject(new Error('no stock')) });
    const found = await paidPayment(store, engine, clock, { email: 'Ada@Example.com', amount: '42.10' });
    await store.updateResource({ kind: 'payment', id: found.payment.id, orderId: 'A-1001' }, new Date(T0));
    const failed = await paidPayment(store, engine, clock, { email: 'bob@example.com', amount: '10.00', received: '12.00' });
    const app = await consoleApp(store);
    const page = `/checkout-kit/payments/${found.payment.id}`;

    for (const q of ['A-1001', found.payment.id, 'ada@example.COM', found.eventId]) {
      const response = await app.inject(`/checkout-kit/search?q=${encodeURIComponent(` ${q} `)}`);
      expect(response.statusCode, q).toBe(303);
      expect(response.headers.location, q).toBe(page);
    }
    // An order id kept with its spaces is found as it was given, and only so.
    const spaced = await paidPayment(store, engine, clock, { email: 'cy@example.com', amount: '5.00' });
    await store.updateResource({ kind: 'payment', id: spaced.payment.id, orderId: ' B-7 ' }, new Date(T0));
    const bySpacedId = await app.inject(`/checkout-kit/search?q=${encodeURIComponent(' B-7 ')}`);
    expect(bySpacedId.statusCode).toBe(303);
    expect(bySpacedId.headers.location).toBe(`/checkout-kit/payments/${spaced.payment.id}`);
    expect((await app.inject(`/checkout-kit/payments?q=${encodeURIComponent(' B-7 ')}`)).body).toContain(`data-id="${spaced.payment.id}"`);
    expect((await app.inject('/checkout-kit/search?q=B-7')).statusCode).toBe(200);
    expect((await app.inject('/checkout-kit/search?q=%20%20')).statusCode).toBe(400);
    // A tenant's order key as long as one may be, pasted with spaces around it, is found too.
    const longest = `${'😀'.repeat(200)}/${'L'.repeat(200)}`;
    await store.updateResource({ kind: 'payment', id: failed.payment.id, orderId: longest }, new Date(T0));
    const byLongest = await app.inject(`/checkout-kit/search?q=${encodeURIComponent(` ${longest} `)}`);
    expect([byLongest.statusCode, byLongest.headers.location]).toEqual([303, `/checkout-kit/payments/${failed.payment.id}`]);
    expect((await app.inject(`/checkout-kit/search?q=${'L'.repeat(402)}`)).statusCode).toBe(400);
    const none = await app.inject('/checkout-kit/search?q=A-9999');
    expect(none.statusCode).toBe(200);
    expect(none.body).toContain('nothing found for “A-9999”');
    expect((await app.inject('/checkout-kit/search')).statusCode).toBe(400);

    const list = await app.inject('/checkout-kit/payments');
    const row = (id: string) => new RegExp(`<tr data-id="${id}" data-handler="([a-z]+)">([\\s\\S]*?)</tr>`).exec(list.body);
    expect(row(found.payment.id)?.[1]).toBe('done');
    // The amount with the token it is asked in, as the service names it.
    expect(row(found.payment.id)?.[2]).toContain('<td class="num">42.10 USDT</td>');
    expect((await app.inject(page)).body).toContain('<dd data-field="amount">42.10 USDT</dd>');
    expect(row(failed.payment.id)?.[1]).toBe('failed');
    expect(row(failed.payment.id)?.[2]).toMatch(/12\.00[\s\S]*overpaid[\s\S]*failed for good/);
    const onlyFailed = await app.inject('/checkout-kit/payments?handler=failed');
    expect(onlyFailed.body).toContain(failed.payment.id);
    expect(onlyFailed.body).not.toContain(found.payment.id);
    const byAmount = await app.inject('/checkout-kit/payments?amountMin=40&amountMax=50&outcome=paid&from=2031-03-04&to=2031-03-04');
    expect(byAmount.body).toContain(found.payment.id);
    expect(byAmount.body).not.toContain(failed.payment.id);
    // Pasted with the spaces around them, amounts and an event filter's payment id still match.
    const spacedAmounts = await app.inject(`/checkout-kit/payments?amountMin=${encodeURIComponent(' 40 ')}&amountMax=${encodeURIComponent('50.00\n')}`);
    expect([spacedAmounts.statusCode, spacedAmounts.body.includes(found.payment.id)]).toEqual([200, true]);
    expect(spacedAmounts.body).not.toContain(failed.payment.id);
    expect((await app.inject('/checkout-kit/payments?amountMin=%20%20')).statusCode).toBe(200);
    const events = await app.inject(
      `/checkout-kit/events?resource=${encodeURIComponent(` ${found.payment.id}\n`)}&type=${encodeURIComponent('payment.paid ')}`,
    );
    expect(events.body).toContain(found.eventId);
    expect(events.body).not.toContain(failed.eventId);
    expect((await app.inject('/checkout-kit/payments?orderId=A-1001')).statusCode).toBe(400);
    const badAmount = await app.inject('/checkout-kit/payments?amountMin=forty');
    expect(badAmount.statusCode).toBe(400);
    expect(badAmount.json()).toMatchObject({ error: { code: 'invalid_request', message: expect.stringContaining('amounts are decimals') } });
    expect((await app.inject('/checkout-kit/')).body).toContain('action="/checkout-kit/search"');
  });

  it('renders markup in a stored event as text: in the list, the event, the payment timeline and a dead letter', async () => {
    const store = new MemoryStore();
    const payload = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">';
    await store.insertEvent(
      storedEvent({
        id: 'evt_xss',
        type: `payment.paid${payload}`,
        resourceId: 'pay_xss',
        body: eventBody('evt_xss', 'payment.paid', { id: 'pay_xss', note: `</pre>${payload}` }),
      }),
      new Date(T0),
    );
    await store.updateResource(
      { kind: 'payment', id: 'pay_xss', source: 'webhook', snapshot: { id: 'pay_xss', amount: '1', status: payload, email: 'x@example.com' } },
      new Date(T0),
    );
    await store.appendActivity({ subject: 'payment:pay_xss', kind: 'news', data: { source: 'webhook', ok: false, error: payload } }, new Date(T0));
    await store.insertDeadLetter({ receivedAt: new Date(T0).toISOString(), reason: payload, body: payload, headers: {} }, new Date(T0));
    const app = await consoleApp(store);
    for (const url of [
      '/checkout-kit/events',
      '/checkout-kit/events/evt_xss',
      '/checkout-kit/payments/pay_xss',
      '/checkout-kit/dead-letters',
      '/checkout-kit/',
    ]) {
      const response = await app.inject(url);
      expect(response.statusCode, url).toBe(200);
      expect(response.body, url).not.toContain('<script>window');
      expect(response.body, url).not.toContain('<img src=x');
      expect(response.body, url).toContain('&lt;script&gt;window.__pwned = 1&lt;/script&gt;');
    }
  });

  it('opens an event whose id is as long as the receiver takes (255 characters), from the events list', async () => {
    const store = new MemoryStore();
    const id = `evt_${'x'.repeat(240)}/${'y'.repeat(10)}`;
    await store.insertEvent(storedEvent({ id, resourceId: 'pay_long', body: eventBody(id, 'payment.paid', { id: 'pay_long' }) }), new Date(T0));
    const app = await consoleApp(store);
    const link = /href="(\/checkout-kit\/events\/evt_[^"]+)"/.exec((await app.inject('/checkout-kit/events')).body)?.[1];
    expect(link).toBe(`/checkout-kit/events/${encodeURIComponent(id)}`);
    const page = await app.inject(link as string);
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('y'.repeat(10));
    expect((await app.inject(`/checkout-kit/events/${encodeURIComponent(`${id}z`)}`)).json()).toEqual({
      error: { code: 'not_found', message: `No event ${id}z in the store.` },
    });
  });

  it('shows bidirectional controls in ids and error reasons as escapes, and finds an id by what the page shows or by the id itself', async () => {
    const store = new MemoryStore();
    // U+202E turns what follows around on screen: "pay_\u202ecod.exe" would read as "pay_exe.doc".
    const paymentId = 'pay_\u202ecod.exe';
    const key = `payment:${paymentId}:paid`;
    const eventId = 'evt_\u2066x\u2069\u200f';
    const reason = 'warehouse says \u202bsku\u202c gone\u061c';
    await store.updateResource(
      { kind: 'payment', id: paymentId, orderId: 'A-\u202d1001', source: 'webhook', snapshot: { id: paymentId, amount: '1', status: 'PAID' } },
      new Date(T0),
    );
    await store.insertEvent(storedEvent({ id: eventId, resourceId: paymentId, body: eventBody(eventId, 'payment.paid', { id: paymentId }) }), new Date(T0));
    await store.enqueueRun({ key, kind: 'fulfillment', data: {} }, new Date(T0));
    await store.claimRun(key, { owner: 'w', leaseMs: 1000, now: new Date(T0) });
    await store.failRun(key, 'w', { error: reason, now: new Date(T0) });
    await store.insertDeadLetter({ receivedAt: new Date(T0).toISOString(), reason: `invalid_json: ${reason}`, body: '{', headers: {} }, new Date(T0));
    const app = await consoleApp(store);
    const base = await app.listen({ port: 0, host: '127.0.0.1' });
    const get = (path: string) => fetch(`${base}/checkout-kit${path}`, { redirect: 'manual' });
    const BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

    const shown = {
      paymentId: 'pay_\\u202ecod.exe',
      orderId: 'A-\\u202d1001',
      eventId: 'evt_\\u2066x\\u2069\\u200f',
      reason: 'warehouse says \\u202bsku\\u202c gone\\u061c',
    };
    const pages: Array<[string, string[]]> = [
      ['/', []],
      ['/payments', [shown.paymentId, shown.orderId]],
      [`/payments/${encodeURIComponent(paymentId)}`, [shown.paymentId, shown.orderId, shown.reason]],
      ['/events', [shown.eventId, shown.paymentId]],
      [`/events/${encodeURIComponent(eventId)}`, [shown.eventId, shown.paymentId]],
      ['/runs', [shown.reason]],
      ['/dead-letters', [shown.reason]],
      [`/actions/retry?key=${encodeURIComponent(key)}`, [shown.paymentId, shown.reason]],
    ];
    for (const [path, escapes] of pages) {
      const response = await get(path);
      const body = await response.text();
      expect(response.status, path).toBe(200);
      // A hidden field is never shown: it carries the id back as stored (see the retry below).
      expect(BIDI.exec(body.replace(/<input type="hidden"[^>]*>/g, ''))?.[0], path).toBeUndefined();
      for (const escaped of escapes) expect(body, path).toContain(escaped);
    }

    // The search box takes an id as the page shows it (copied from it) or as it is (pasted from elsewhere).
    for (const q of [shown.paymentId, paymentId, shown.orderId, 'A-\u202d1001', shown.eventId, eventId]) {
      const response = await get(`/search?q=${encodeURIComponent(q)}`);
      expect([response.status, response.headers.get('location')], q).toEqual([303, `/checkout-kit/payments/${encodeURIComponent(paymentId)}`]);
    }
    const none = await (await get(`/search?q=${encodeURIComponent('A-\\u202d9999')}`)).text();
    expect(none).toContain('nothing found for “A-\\u202d9999”');
    expect(none).toContain('value="A-\\u202d9999"');
    expect(await (await get(`/payments?q=${encodeURIComponent(shown.orderId)}`)).text()).toContain(`value="${shown.orderId}"`);
    expect(await (await get(`/events?resource=${encodeURIComponent(shown.paymentId)}`)).text()).toContain(shown.eventId);

    // The confirmation sends the run's key back as stored, and the retry finds the run.
    const form = confirmForm(await (await get(`/actions/retry?key=${encodeURIComponent(key)}`)).text());
    expect(form.key).toBe(key);
    const retried = await fetch(`${base}/checkout-kit/actions/retry`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: base },
      body: new URLSearchParams(form).toString(),
    });
    expect(retried.status).toBe(200);
    expect(resultText(await retried.text())).toContain(`Run payment:${shown.paymentId}:paid is back in line`);
    expect((await store.getRun(key))?.status).toBe('pending');
  });

  it('masks e-mail addresses until one is revealed, and logs the reveal', async () => {
    const store = new MemoryStore();
    const { engine, clock } = testEngine(store, { paid: async () => {} });
    const { payment, eventId } = await paidPayment(store, engine, clock, { email: 'alice.buyer@example.com' });
    const app = await consoleApp(store);
    for (const url of [`/checkout-kit/payments/${payment.id}`, `/checkout-kit/events/${eventId}`]) {
      const masked = await app.inject(url);
      expect(masked.body).not.toContain('alice.buyer@example.com');
      expect(masked.body).toContain('a•••@e•••.com');
      const revealed = await app.inject(`${url}?reveal=1`);
      expect(revealed.body).toContain('alice.buyer@example.com');
    }
    const log = await store.listActivity({ subject: 'console' });
    expect(log.map((entry) => [entry.kind, entry.data.target])).toEqual([
      ['reveal', `event ${eventId}`],
      ['reveal', `payment ${payment.id}`],
    ]);
  });

  it("lists a platform's tenants with their merchants, e-mails masked, oldest first", async () => {
    const store = new MemoryStore();
    const tenant = { environment: 'test' as const, name: 'Shop <One>', email: 'owner@shop-one.example', requestHash: 'h' };
    await store.putTenantMerchant({ ...tenant, tenantId: 't-1', idempotencyKey: 'k1' }, new Date(T0));
    await store.completeTenantMerchant('t-1', 'test', { merchantId: 'm-1', externalTenantId: 't-1' } as never, new Date(T0));
    await store.putTenantMerchant({ ...tenant, tenantId: 't-2', idempotencyKey: 'k2' }, new Date(T0 + 1));
    const app = await consoleApp(store);
    const response = await app.inject('/checkout-kit/merchants');
    expect(response.statusCode).toBe(200);
    const rows = [...response.body.matchAll(/<tr data-tenant="([^"]+)">([\s\S]*?)<\/tr>/g)].map((match) => [match[1], match[2]]);
    expect(rows.map(([tenantId]) => tenantId)).toEqual(['t-1', 't-2']);
    expect(rows[0]![1]).toMatch(/m-1[\s\S]*created[\s\S]*Shop &lt;One&gt;/);
    expect(rows[1]![1]).toContain('sending');
    expect(response.body).not.toContain('owner@shop-one.example');
    expect((await app.inject('/checkout-kit/merchants?page=0')).statusCode).toBe(400);
  });

  it('never shows a secret: configured ones and key-shaped strings in stored data are redacted', async () => {
    const canary = 'canary-console-token-5f1e9a0c7b';
    registerSecret(canary);
    const store = new MemoryStore();
    const body = eventBody('evt_secret', 'payment.paid', {
      id: 'pay_s',
      note: `leaked whsec_c2VjcmV0c2VjcmV0c2VjcmV0 svc_mk_test_abcdefabcdef123456 ${canary}`,
    });
    await store.insertEvent(storedEvent({ id: 'evt_secret', resourceId: 'pay_s', body }), new Date(T0));
    const secrets = ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'];
    registerSecret(secrets[0]);
    const app = await consoleApp(store, { token: canary, replay: { secrets, defaultUrl: 'http://127.0.0.1:9/webhooks/checkout' } });
    const signedIn = { authorization: `Bearer ${canary}` };
    for (const url of [
      '/checkout-kit/',
      '/checkout-kit/events',
      '/checkout-kit/events/evt_secret',
      '/checkout-kit/actions/replay?event=evt_secret',
      '/checkout-kit/log',
    ]) {
      const response = await app.inject({ url, headers: signedIn });
      expect(response.statusCode, url).toBe(200);
      for (const secret of [canary, secrets[0] as string, 'whsec_c2VjcmV0', 'svc_mk_test_abcdef'])
        expect(response.body, `${url} shows ${secret}`).not.toContain(secret);
    }
    expect((await app.inject({ url: '/checkout-kit/events/evt_secret', headers: signedIn })).body).toContain('[redacted]');
  });

  it('answers a console page asked with another method with 405 naming the methods it takes in Allow', async () => {
    const app = await consoleApp(new MemoryStore());
    const cases: Array<[method: 'POST' | 'PUT' | 'DELETE', url: string, allow: string]> = [
      ['POST', '/checkout-kit/', 'GET, HEAD'],
      ['DELETE', '/checkout-kit/payments', 'GET, HEAD'],
      ['POST', '/checkout-kit/payments/pay_1?reveal=1', 'GET, HEAD'],
      ['PUT', '/checkout-kit/actions/retry', 'GET, HEAD, POST'],
      ['DELETE', '/checkout-kit/login', 'GET, HEAD, POST'],
    ];
    for (const [method, url, allow] of cases) {
      const response = await app.inject({ method, url });
      const path = url.split('?')[0];
      expect([response.statusCode, response.headers.allow, response.json()], `${method} ${url}`).toEqual([
        405,
        allow,
        { error: { code: 'method_not_allowed', message: `${method} ${path} is not served: use ${allow.split(', ').join(' or ')}.` } },
      ]);
    }
    const nowhere = await app.inject({ method: 'POST', url: '/checkout-kit/nope' });
    expect([nowhere.statusCode, nowhere.json()]).toEqual([
      404,
      { error: { code: 'not_found', message: 'No console page at POST /checkout-kit/nope: start at /checkout-kit/.' } },
    ]);
  });

  it('takes a page asked for with a trailing slash to that page, query kept, rather than a payment or event with an empty id', async () => {
    const app = await consoleApp(new MemoryStore());
    const cases: Array<[asked: string, page: string]> = [
      ['/checkout-kit/payments/', '/checkout-kit/payments'],
      ['/checkout-kit/events/?status=failed', '/checkout-kit/events?status=failed'],
      ['/checkout-kit/invoices//', '/checkout-kit/invoices'],
      ['/checkout-kit/runs/', '/checkout-kit/runs'],
    ];
    for (const [asked, page] of cases) {
      const response = await app.inject(asked);
      expect([response.statusCode, response.headers.location], asked).toEqual([308, page]);
      expect((await app.inject(page)).statusCode, page).toBe(200);
    }
    // The overview is the one page whose address ends with its slash.
    expect((await app.inject('/checkout-kit/')).statusCode).toBe(200);
  });

  it('mounted at the root, never redirects to another site', async () => {
    const app = Fastify();
    apps.push(app);
    await app.register(checkoutConsole, { store: new MemoryStore(), clock: () => new Date(T0), basePath: '' });
    const response = await app.inject('//evil.example/');
    expect(response.headers.location).toBe('/evil.example');
  });

  it('answers bad input and unknown routes with the error object', async () => {
    const app = await consoleApp(new MemoryStore());
    const cases: Array<[string, number, string, RegExp]> = [
      ['/checkout-kit/nope', 404, 'not_found', /No console page at GET \/checkout-kit\/nope/],
      ['/checkout-kit/events?status=bogus', 400, 'invalid_request', /status must be one of pending, running, done, failed/],
      ['/checkout-kit/events?colour=red', 400, 'invalid_request', /unknown parameter "colour"/],
      ['/checkout-kit/runs?page=0', 400, 'invalid_request', /page must be a whole number from 1/],
      ['/checkout-kit/payments?learnedBy=magic', 400, 'invalid_request', /learnedBy must be one of webhook, reconcile, return, checkout/],
      ['/checkout-kit/payments/missing', 404, 'not_found', /No payment missing in the store/],
      ['/checkout-kit/events/missing', 404, 'not_found', /No event missing/],
      ['/checkout-kit/actions/launch', 404, 'not_found', /No console action "launch"/],
      ['/checkout-kit/actions/retry', 400, 'invalid_request', /key is required/],
      ['/checkout-kit/actions/retry?key=payment:x:paid', 404, 'not_found', /No run payment:x:paid/],
      ['/checkout-kit/actions/reconcile', 409, 'action_unavailable', /Reconcile is not available here/],
      ['/checkout-kit/actions/replay?event=e', 409, 'action_unavailable', /CHECKOUT_WEBHOOK_SECRET/],
    ];
    for (const [url, status, code, message] of cases) {
      const response = await app.inject(url);
      expect(response.statusCode, url).toBe(status);
      expect(response.json(), url).toEqual({ error: { code, message: expect.stringMatching(message) } });
    }
  });

  it('answers a browser the same refusals as a console page with the same status, the message as text', async () => {
    const app = await consoleApp(new MemoryStore());
    const cases: Array<[string, number, string]> = [
      ['/checkout-kit/payments?amountMin=10%2C5', 400, 'amountMin: amounts are decimals such as 42.10.'],
      ['/checkout-kit/search?q=%20%20', 400, 'q is the order id, payment or invoice id, e-mail or event id to find.'],
      ['/checkout-kit/payments/pay_%E2%80%AE%3Cb%3E', 404, 'No payment pay_\\u202e&lt;b&gt; in the store.'],
      ['/checkout-kit/nope', 404, 'No console page at GET /checkout-kit/nope: start at /checkout-kit/.'],
      ['/checkout-kit/actions/reconcile', 409, 'Reconcile is not available here'],
    ];
    for (const [url, status, message] of cases) {
      const response = await app.inject({ url, headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });
      expect([response.statusCode, response.headers['content-type']], url).toEqual([status, 'text/html; charset=utf-8']);
      expect(response.body, url).toContain(message);
      expect(response.body, url).toContain('href="/checkout-kit/payments"');
      expect(response.headers['content-security-policy'], url).toContain("default-src 'none'");
    }
    // A confirmation made by a console process since restarted.
    const stale = await post(app, '/checkout-kit/actions/retry', { nonce: 'n', csrf: 'c', key: 'x' }, { accept: 'text/html' });
    expect([stale.statusCode, stale.headers['content-type']]).toEqual([403, 'text/html; charset=utf-8']);
    expect(stale.body).toContain('This confirmation is not valid');

    // Without the token, a refused sign-in shows no navigation and no store, as the sign-in page.
    const guarded = await consoleApp(new MemoryStore(), { token: 'a-long-random-console-token-0123456789' });
    const signIn = await guarded.inject({
      method: 'POST',
      url: '/checkout-kit/login',
      headers: { accept: 'text/html', 'content-type': 'application/x-www-form-urlencoded' },
      payload: `token=${'x'.repeat(20_000)}`,
    });
    expect([signIn.statusCode, signIn.headers['content-type']]).toEqual([413, 'text/html; charset=utf-8']);
    expect(signIn.body).not.toContain('href="/checkout-kit/payments"');
    expect(signIn.body).not.toContain('memory');
  });

  it('retries a failed run once per confirmation: CSRF required, a second submit does nothing, a new one finds nothing to do', async () => {
    const store = new MemoryStore();
    let broken = true;
    const completed: string[] = [];
    const { engine, clock } = testEngine(store, {
      paid: async (_payment, ctx) => {
        if (broken) throw new Error('warehouse offline');
        completed.push(ctx.key);
      },
    });
    const { payment } = await paidPayment(store, engine, clock);
    const key = `payment:${payment.id}:paid`;
    expect((await store.getRun(key))?.status).toBe('failed');
    const app = await consoleApp(store, { engine, runDue: () => engine.runDue() });

    const confirm = await app.inject(`/checkout-kit/actions/retry?key=${encodeURIComponent(key)}`);
    expect(confirm.statusCode).toBe(200);
    expect(confirm.body).toContain('warehouse offline');
    const form = confirmForm(confirm.body);
    expect(Object.keys(form).sort()).toEqual(['csrf', 'key', 'nonce']);

    // Without the token, with another action's token, or from another site: refused, nothing done.
    expect((await post(app, '/checkout-kit/actions/retry', { key })).json()).toMatchObject({ error: { code: 'invalid_csrf_token' } });
    const other = confirmForm((await app.inject('/checkout-kit/actions/retry-all')).body);
    expect((await post(app, '/checkout-kit/actions/retry', { ...form, csrf: other.csrf as string })).statusCode).toBe(403);
    const crossSite = await post(app, '/checkout-kit/actions/retry', form, { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' });
    expect(crossSite.statusCode).toBe(403);
    expect(crossSite.json()).toMatchObject({ error: { code: 'cross_site_request' } });
    expect((await store.getRun(key))?.status).toBe('failed');

    broken = false;
    const first = await post(app, '/checkout-kit/actions/retry', form);
    expect(first.statusCode).toBe(200);
    expect(first.body).toContain('is back in line: it runs again now');
    await eventually(async () => ((await store.getRun(key))?.status === 'done' ? true : undefined), undefined, 10);
    const again = await post(app, '/checkout-kit/actions/retry', form);
    expect(again.body).toContain('id="repeated"');
    const fresh = confirmForm((await app.inject(`/checkout-kit/actions/retry?key=${encodeURIComponent(key)}`)).body);
    const second = await post(app, '/checkout-kit/actions/retry', fresh);
    expect(resultText(second.body)).toContain(`Nothing to do: run ${key} is done`);
    await engine.runDue();
    expect(completed).toEqual([key]);

    const log = await store.listActivity({ subject: 'console' });
    expect(log.map((entry) => [entry.kind, entry.data.target, entry.data.ok])).toEqual([
      ['retry', key, true],
      ['retry', key, true],
    ]);
  });

  it('says what a retry does: the run gets its attempts again, so a handler that still throws is retried with backoff before it fails for good again', async () => {
    const store = new MemoryStore();
    const key = 'payment:pay_1:paid';
    await store.enqueueRun({ key, kind: 'fulfillment', data: {} }, new Date(T0));
    await store.claimRun(key, { owner: 'w', leaseMs: 60_000, now: new Date(T0) });
    await store.failRun(key, 'w', { error: 'warehouse offline', now: new Date(T0) });
    const app = await consoleApp(store);

    const confirm = await app.inject(`/checkout-kit/actions/retry?key=${encodeURIComponent(key)}`);
    expect(confirm.body).toContain('back in line with its attempts started over');
    expect(confirm.body).toContain('retried with backoff while it fails');
    expect((await post(app, '/checkout-kit/actions/retry', confirmForm(confirm.body))).statusCode).toBe(200);
    expect(await store.getRun(key)).toMatchObject({ status: 'pending', attempts: 0 });

    const all = await app.inject('/checkout-kit/actions/retry-all');
    expect(all.body).toContain('Their attempts start over');
  });

  it('a confirmation the store cannot take for a while (another process holds its write lock) is 503 store_unavailable with Retry-After, and confirming again does it', async () => {
    const dir = await tempDir('ck-console-busy-');
    const store = new SqliteStore({ dir, busyTimeoutMs: 50 });
    await store.open();
    const { engine, clock } = testEngine(store, { paid: async () => Promise.reject(new Error('warehouse offline')) });
    const { payment } = await paidPayment(store, engine, clock);
    const key = `payment:${payment.id}:paid`;
    expect((await store.getRun(key))?.status).toBe('failed');
    const app = await consoleApp(store, { engine });
    const form = confirmForm((await app.inject(`/checkout-kit/actions/retry?key=${encodeURIComponent(key)}`)).body);

    const holder = loadDriver().open(join(dir, 'store.sqlite'));
    holder.exec('BEGIN IMMEDIATE');
    const busy = await post(app, '/checkout-kit/actions/retry', form);
    expect([busy.statusCode, busy.headers['retry-after'], busy.json()]).toEqual([
      503,
      '5',
      {
        error: {
          code: 'store_unavailable',
          message: "The console action could not be completed just now (the shop's store is unavailable); try again in a moment.",
        },
      },
    ]);
    holder.exec('COMMIT');
    holder.close();
    expect((await store.getRun(key))?.status).toBe('failed');

    const again = await post(app, '/checkout-kit/actions/retry', form);
    expect(again.statusCode).toBe(200);
    expect(resultText(again.body)).toContain(`Run ${key} is back in line`);
    expect((await store.getRun(key))?.status).not.toBe('failed');
    await app.close();
    await store.close();
  });

  it('says when a retried run runs: a standalone console (no engine to start) cannot dispatch an event or run a handler now', async () => {
    const store = new MemoryStore();
    await store.insertEvent(storedEvent({ id: 'evt_failed', type: 'payment.paid', receivedAt: new Date(T0).toISOString() }), new Date(T0));
    await store.enqueueRun({ key: 'payment:p1:paid', kind: 'fulfillment', data: {} }, new Date(T0));
    for (const key of ['event:evt_failed', 'payment:p1:paid']) {
      await store.claimRun(key, { owner: 'w', leaseMs: 1000, now: new Date(T0) });
      await store.failRun(key, 'w', { error: 'boom', now: new Date(T0) });
    }
    const app = await consoleApp(store);
    const retry = async (key: string) => {
      const form = confirmForm((await app.inject(`/checkout-kit/actions/retry?key=${encodeURIComponent(key)}`)).body);
      return (await post(app, '/checkout-kit/actions/retry', form)).body;
    };
    expect(await retry('event:evt_failed')).toContain('Run event:evt_failed is back in line: it is dispatched again by serve, within a second while it runs.');
    expect(await retry('payment:p1:paid')).toContain('Run payment:p1:paid is back in line: it runs within a second in serve, or at the next reconcile.');
    expect((await store.getRun('event:evt_failed'))?.status).toBe('pending');
  });

  it("with a token, refuses every request without it, this machine's included: the error object for programs, a sign-in page for browsers", async () => {
    const token = 'a-long-random-console-token-0123456789';
    const app = await consoleApp(new MemoryStore(), { token });
    const refusal = {
      error: {
        code: 'unauthorized',
        message: 'Missing or wrong console token: send CHECKOUT_CONSOLE_TOKEN as "Authorization: Bearer <token>", or sign in on the console\'s login page.',
      },
    };
    // inject's socket is 127.0.0.1, as a proxy on this machine that sends no forwarding header is.
    const requests = { loopback: {}, elsewhere: { remoteAddress: '203.0.113.9' }, relayed: { headers: { 'x-forwarded-for': '198.51.100.7' } } };
    for (const [label, request] of Object.entries(requests)) {
      const json = await app.inject({ url: '/checkout-kit/', ...request });
      expect(json.statusCode, label).toBe(401);
      expect(json.headers['www-authenticate'], label).toBe('Bearer realm="checkout-kit"');
      expect(json.json(), label).toEqual(refusal);
      const page = await app.inject({
        url: '/checkout-kit/runs',
        ...request,
        headers: { ...('headers' in request ? request.headers : {}), accept: 'text/html' },
      });
      expect(page.statusCode, label).toBe(401);
      expect(page.body, label).toContain('name="token"');
      expect(page.body, label).not.toContain('memory (nothing');
    }
    for (const remoteAddress of ['127.0.0.1', '203.0.113.9']) {
      expect((await app.inject({ url: '/checkout-kit/', remoteAddress, headers: { authorization: `Bearer ${token}` } })).statusCode, remoteAddress).toBe(200);
      expect(
        (await app.inject({ url: '/checkout-kit/', remoteAddress, headers: { authorization: `Bearer ${token.slice(0, -1)}` } })).statusCode,
        remoteAddress,
      ).toBe(401);
    }
  });

  it('with a token, a request without it reaches only the sign-in page and the sign-in; the cookie it sets opens the console on this machine', async () => {
    const token = 'a-long-random-console-token-0123456789';
    const app = Fastify();
    apps.push(app);
    const routes: Array<[string, string]> = [];
    app.addHook('onRoute', (route) => {
      for (const method of [route.method].flat()) routes.push([method, route.url]);
    });
    await app.register(checkoutConsole, { store: new MemoryStore(), clock: () => new Date(T0), token });
    await app.ready();
    expect(routes.length).toBeGreaterThan(15);

    const signIn = ['POST', '/checkout-kit/login'];
    for (const [method, route] of routes) {
      if (method === signIn[0] && route === signIn[1]) continue;
      const url = route.replace(/:\w+/g, 'x');
      const response = await app.inject({ method: method as 'GET', url, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: '' });
      expect(response.statusCode, `${method} ${route}`).toBe(401);
      if (method !== 'HEAD') expect(response.json(), `${method} ${route}`).toMatchObject({ error: { code: 'unauthorized' } });
    }
    // A page the route table does not have is refused the same way, before it says what exists.
    expect((await app.inject('/checkout-kit/nope')).statusCode).toBe(401);

    // The sign-in page is the refusal itself: the form and the console's own inline style and script, nothing more to fetch.
    const page = await app.inject({ url: '/checkout-kit/', headers: { accept: 'text/html' } });
    expect(page.statusCode).toBe(401);
    expect(page.body).toContain('<form method="post" action="/checkout-kit/login">');
    expect(page.body).not.toMatch(/<(?:link|img)\b|<script src=|<nav>/);

    expect((await post(app, '/checkout-kit/login', { token: 'not-the-token-0123456789' })).statusCode).toBe(401);
    const signedIn = await post(app, '/checkout-kit/login', { token });
    expect(signedIn.statusCode).toBe(303);
    expect(signedIn.headers.location).toBe('/checkout-kit/');
    const cookie = String(signedIn.headers['set-cookie']).split(';')[0] as string;
    expect(cookie).toMatch(/^checkout_kit_console=/);
    expect(cookie).not.toContain(token);
    const overview = await app.inject({ url: '/checkout-kit/', headers: { cookie, accept: 'text/html' } });
    expect(overview.statusCode).toBe(200);
    expect(overview.body).toContain('data-count="events-last-hour"');
  });

  it("signing in from a page asked for (an alert's link) opens that page, and never another site", async () => {
    const token = 'a-long-random-console-token-0123456789';
    const app = await consoleApp(new MemoryStore(), { token });
    const asked = '/checkout-kit/runs?status=failed&kind=fulfillment';
    const refused = await app.inject({ url: asked, headers: { accept: 'text/html' } });
    expect(refused.statusCode).toBe(401);
    const next = /<input type="hidden" name="next" value="([^"]*)">/.exec(refused.body)?.[1]?.replace(/&amp;/g, '&');
    expect(next).toBe(asked);
    // A wrong token keeps the page asked for in the form.
    expect((await post(app, '/checkout-kit/login', { token: 'not-the-token-0123456789', next: asked })).body).toContain(
      'name="next" value="/checkout-kit/runs?status=failed&amp;kind=fulfillment"',
    );
    expect((await post(app, '/checkout-kit/login', { token, next: asked })).headers.location).toBe(asked);
    for (const elsewhere of [
      '//evil.example/',
      '/checkout-kit/../../x\\y',
      'https://evil.example/checkout-kit/',
      '/checkout-kitten',
      '/checkout-kit/\u00e9',
      '/checkout-kit/a\r\nSet-Cookie: x=1',
    ]) {
      const response = await post(app, '/checkout-kit/login', { token, next: elsewhere });
      expect([response.statusCode, response.headers.location], elsewhere).toEqual([303, '/checkout-kit/']);
    }
  });

  it('without a token, lets this machine in and refuses a request a proxy relays or one from elsewhere', async () => {
    const app = await consoleApp(new MemoryStore());
    expect((await app.inject('/checkout-kit/')).statusCode).toBe(200);
    const refused = [
      { remoteAddress: '203.0.113.9' },
      ...['forwarded', 'x-forwarded-for', 'x-real-ip', 'x-forwarded-host'].map((name) => ({ headers: { [name]: '198.51.100.7' } })),
      // No token is configured, so none opens it.
      { remoteAddress: '203.0.113.9', headers: { authorization: 'Bearer a-long-random-console-token-0123456789' } },
    ];
    for (const request of refused) {
      const response = await app.inject({ url: '/checkout-kit/', ...request });
      expect(response.statusCode, JSON.stringify(request)).toBe(401);
      expect(response.json()).toEqual({
        error: {
          code: 'unauthorized',
          message: 'This page answers only requests from this machine: set CHECKOUT_CONSOLE_TOKEN to open it to others, then send the token.',
        },
      });
    }
    const page = await app.inject({ url: '/checkout-kit/', remoteAddress: '203.0.113.9', headers: { accept: 'text/html' } });
    expect(page.body).toContain('No CHECKOUT_CONSOLE_TOKEN is configured');
    expect(page.body).not.toContain('name="token"');
  });

  it("without a token, refuses a request from this machine addressed to another host name, as another site's page rebinding its name to 127.0.0.1 sends", async () => {
    const app = await consoleApp(new MemoryStore());
    for (const host of ['127.0.0.1:3100', 'localhost:3000', 'localhost', '[::1]:3000', '127.0.0.2:3000']) {
      expect((await app.inject({ url: '/checkout-kit/', headers: { host } })).statusCode, host).toBe(200);
    }
    for (const host of ['rebound.example:3000', '127.0.0.1.nip.io:3000', 'localhost.rebound.example', 'rebound.example#@127.0.0.1', 'user@127.0.0.1:3000']) {
      const response = await app.inject({ url: '/checkout-kit/payments', headers: { host } });
      expect(response.statusCode, host).toBe(401);
      expect(response.json().error.code, host).toBe('unauthorized');
      expect(response.json().error.message, host).toContain('addressed to this machine as 127.0.0.1, localhost or [::1]');
    }
    // Nor can such a page confirm an action with a form it read elsewhere.
    const action = await post(app, '/checkout-kit/actions/retry-all', {}, { host: 'rebound.example:3000', origin: 'http://rebound.example:3000' });
    expect(action.statusCode).toBe(401);
  });
});

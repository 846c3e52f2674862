import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ApiError, type ApiErrorOptions } from '../../src/errors/index.js';
import { FulfillmentEngine, type FulfillmentHandlers } from '../../src/fulfillment/index.js';
import { createLogger } from '../../src/log/index.js';
import { reconcile, RECONCILE_LOCK } from '../../src/reconcile/index.js';
import { MemoryStore } from '../../src/store/index.js';
import { FakeReader } from '../support/fake-reader.js';
import { sampleInvoice, sampleInvoiceDetail, samplePayment } from '../support/fixtures.js';

const ELEVEN_MINUTES_AGO = () => new Date(Date.now() - 11 * 60_000);

function setup(handlers?: FulfillmentHandlers) {
  const reader = new FakeReader();
  const store = new MemoryStore();
  const paidIds: string[] = [];
  const engine = new FulfillmentEngine({ store, client: reader, handlers: handlers ?? { paid: async (r) => void paidIds.push(r.id) } });
  return { reader, store, engine, paidIds };
}

/** Make `reader` answer 404 for payment `id` (counted as a read), as the client reports it. */
function answer404(reader: FakeReader, id: string, answer: Pick<ApiErrorOptions, 'code' | 'message' | 'hasErrorObject'>): void {
  const get = reader.payments.get;
  Object.assign(reader.payments, {
    get: async (asked: string) => {
      if (asked !== id) return get(asked);
      reader.reads += 1;
      throw new ApiError({ status: 404, ...answer, operation: 'payments.get', method: 'GET', url: `https://service.example/v1/payments/${asked}` });
    },
  });
}

describe('reconcile', () => {
  it('fulfils a paid payment whose webhook never came, once, and counts it as missed by webhooks', async () => {
    const { reader, store, engine, paidIds } = setup();
    const payment = reader.put(samplePayment({ amountReceived: '25.00', amount: '25.00' }));
    const pending = reader.put(samplePayment());
    for (const p of [payment, pending]) await store.updateResource({ kind: 'payment', id: p.id, source: 'checkout' }, ELEVEN_MINUTES_AGO());
    const first = await reconcile({ store, engine });
    expect(first).toMatchObject({ skipped: false, checked: 2, advanced: 1, fulfilled: 1, missedByWebhooks: 1, failed: 0 });
    expect(paidIds).toEqual([payment.id]);
    const second = await reconcile({ store, engine, olderThanMs: 0 });
    expect(second).toMatchObject({ checked: 1, fulfilled: 0 }); // the paid one is closed; only the pending one is polled
    expect(paidIds).toEqual([payment.id]);
  });

  it('leaves resources with recent news alone', async () => {
    const { reader, store, engine } = setup();
    const payment = reader.put(samplePayment());
    await store.updateResource({ kind: 'payment', id: payment.id, source: 'webhook' });
    expect((await reconcile({ store, engine })).checked).toBe(0);
    expect(reader.reads).toBe(0);
  });

  it('a second pass while one runs is skipped at once', async () => {
    const { store, engine } = setup();
    expect(await store.acquireLock(RECONCILE_LOCK, 'other-process', 60_000)).toBe(true);
    expect(await reconcile({ store, engine })).toMatchObject({ skipped: true, checked: 0 });
  });

  it('finds invoices the store never saw through List invoices', async () => {
    const { reader, store, engine } = setup();
    const known = sampleInvoice();
    await store.updateResource({ kind: 'invoice', id: known.id, source: 'webhook' });
    const unseen = sampleInvoiceDetail({ amountReceived: '40.00' });
    reader.invoicesById.set(unseen.id, unseen);
    const summary = await reconcile({ store, engine, listInvoices: async () => [known, unseen] });
    expect(summary).toMatchObject({ discovered: 1, checked: 1, fulfilled: 1, missedByWebhooks: 1 });
    expect((await store.getResource('invoice', unseen.id))?.outcome).toBe('paid');
  });

  it('counts a List invoices that fails as a failed poll, naming it, so a pass that could not reach the service is not a clean one', async () => {
    const { store, engine } = setup();
    const summary = await reconcile({
      store,
      engine,
      listInvoices: async () => Promise.reject(new Error('invoices.list could not reach the service: connect ECONNREFUSED')),
    });
    expect(summary).toMatchObject({ skipped: false, checked: 0, discovered: 0, failed: 1 });
    expect(summary.errors).toEqual([{ kind: 'invoice', id: '(list)', error: expect.stringMatching(/could not reach the service/) }]);
  });

  it('reports failures: a handler that fails for good, an unreadable resource, and runs awaiting retry', async () => {
    const reader = new FakeReader();
    const store = new MemoryStore();
    const engine = new FulfillmentEngine({ store, client: reader, maxAttempts: 1, handlers: { paid: async () => Promise.reject(new Error('no stock')) } });
    const payment = reader.put(samplePayment({ amountReceived: '25.00', amount: '25.00' }));
    await store.updateResource({ kind: 'payment', id: payment.id, source: 'checkout' }, ELEVEN_MINUTES_AGO());
    await store.updateResource({ kind: 'payment', id: '5e1c3a4b-0000-4000-8000-000000000000', source: 'checkout' }, ELEVEN_MINUTES_AGO());
    const summary = await reconcile({ store, engine });
    expect(summary).toMatchObject({ checked: 1, failed: 2, fulfilled: 0, awaitingRetry: 1 });
    expect(summary.errors).toEqual([{ kind: 'payment', id: '5e1c3a4b-0000-4000-8000-000000000000', error: expect.stringMatching(/not found/) }]);
    expect((await store.getRun(`payment:${payment.id}:paid`))?.lastError).toBe('no stock');
  });

  it('closes a resource the service answers 404 for, so the next passes neither ask again nor fail on it', async () => {
    const { reader, store, engine } = setup();
    const unknown = '5e1c3a4b-0000-4000-8000-0000000000aa';
    answer404(reader, unknown, { code: 'not_found', message: 'Payment not found' });
    await store.updateResource({ kind: 'payment', id: unknown, source: 'webhook' }, ELEVEN_MINUTES_AGO());
    // Alone, it could be a CHECKOUT_BASE_URL that answers 404 for everything: kept open, an error.
    const alone = await reconcile({ store, engine });
    expect(alone).toMatchObject({
      failed: 1,
      unknownToService: 0,
      errors: [{ id: unknown, error: expect.stringMatching(/no read of this pass succeeded.*check CHECKOUT_BASE_URL/) }],
    });
    expect((await store.getResource('payment', unknown))?.open).toBe(true);
    // Beside a payment the service does know: it is the resource, not the address.
    const known = reader.put(samplePayment());
    await store.updateResource({ kind: 'payment', id: known.id, source: 'checkout' }, ELEVEN_MINUTES_AGO());
    const first = await reconcile({ store, engine, olderThanMs: 0 });
    expect(first).toMatchObject({ checked: 1, failed: 0, unknownToService: 1, errors: [] });
    expect((await store.getResource('payment', unknown))?.open).toBe(false);
    const reads = reader.reads;
    const second = await reconcile({ store, engine, olderThanMs: 0 });
    expect(second).toMatchObject({ checked: 1, failed: 0, unknownToService: 0 });
    expect(reader.reads).toBe(reads + 1);
  });

  it('closes a test payment the live keys are answered 404 for, alone in its pass, saying why instead of blaming CHECKOUT_BASE_URL', async () => {
    const { reader, store, engine } = setup();
    const fromTesting = '5e1c3a4b-0000-4000-8000-0000000000cc';
    answer404(reader, fromTesting, { code: 'not_found', message: 'No payment with this id in the live environment.' });
    await store.updateResource({ kind: 'payment', id: fromTesting, environment: 'test', source: 'checkout' }, ELEVEN_MINUTES_AGO());
    let logs = '';
    const logger = createLogger({ destination: new Writable({ write: (chunk, _encoding, done) => ((logs += String(chunk)), done()) }) });
    const pass = await reconcile({ store, engine, environment: 'live', logger });
    expect(pass).toMatchObject({ checked: 0, failed: 0, unknownToService: 1, errors: [] });
    expect(
      logs
        .trim()
        .split('\n')
        .map((line) => (JSON.parse(line) as { msg: string }).msg),
    ).toEqual([`payment ${fromTesting} is a test payment, which the service does not show to these live keys (404): closed, so reconcile stops asking`]);
    expect((await store.getResource('payment', fromTesting))?.open).toBe(false);
    // Of the keys' own environment, a lone 404 still stays open as a failed poll.
    const own = '5e1c3a4b-0000-4000-8000-0000000000dd';
    answer404(reader, own, { code: 'not_found', message: 'Payment not found' });
    await store.updateResource({ kind: 'payment', id: own, environment: 'live', source: 'checkout' }, ELEVEN_MINUTES_AGO());
    expect(await reconcile({ store, engine, environment: 'live', olderThanMs: 0 })).toMatchObject({ failed: 1, unknownToService: 0 });
    expect((await store.getResource('payment', own))?.open).toBe(true);
  });

  it('keeps open a resource answered 404 off the spec (an HTML page: another server, not the service), as a failed poll', async () => {
    const { reader, store, engine } = setup();
    const routedElsewhere = '5e1c3a4b-0000-4000-8000-0000000000bb';
    answer404(reader, routedElsewhere, { code: 'http_404', message: 'Not Found', hasErrorObject: false });
    await store.updateResource({ kind: 'payment', id: routedElsewhere, source: 'webhook' }, ELEVEN_MINUTES_AGO());
    // Beside a payment the service does know, which alone would let a spec 404 close it.
    const known = reader.put(samplePayment());
    await store.updateResource({ kind: 'payment', id: known.id, source: 'checkout' }, ELEVEN_MINUTES_AGO());
    const pass = await reconcile({ store, engine, olderThanMs: 0 });
    expect(pass).toMatchObject({ checked: 1, failed: 1, unknownToService: 0, errors: [{ id: routedElsewhere }] });
    expect((await store.getResource('payment', routedElsewhere))?.open).toBe(true);
  });

  it('polls with bounded concurrency', async () => {
    const { reader, store, engine } = setup();
    let inFlight = 0;
    let peak = 0;
    const get = reader.payments.get;
    reader.payments.get = async (id: string) => {
      inFlight += 1;
      peak = Math.max(peak, inFlight);
      await new Promise((resolve) => setTimeout(resolve, 5));
      try {
        return await get(id);
      } finally {
        inFlight -= 1;
      }
    };
    for (let i = 0; i < 40; i += 1) {
      const p = reader.put(samplePayment());
      await store.updateResource({ kind: 'payment', id: p.id, source: 'checkout' }, ELEVEN_MINUTES_AGO());
    }
    const progress: number[] = [];
    const summary = await reconcile({ store, engine, concurrency: 3, onProgress: (done) => progress.push(done) });
    expect(summary.checked).toBe(40);
    expect(peak).toBe(3);
    expect(progress.at(-1)).toBe(40);
  });
});

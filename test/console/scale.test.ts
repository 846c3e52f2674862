import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkoutConsole } from '../../src/console/index.js';
import { silentLogger } from '../../src/log/index.js';
import { EmbeddedStore, StoreState } from '../../src/store/index.js';
import { writeSnapshot } from '../../src/store/embedded/snapshot.js';
import { removeTempDirs, tempDir } from '../support/temp-dirs.js';
import { eventBody, T0 } from './seed.js';

// Issue 15: lists stay fast at 100,000 events because paging and counting happen in the store.
// The store is built as a snapshot (applying ops in memory), so the test spends its time reading.
const EVENTS = 100_000;
const TYPES = ['payment.created', 'payment.partially_paid', 'payment.paid', 'invoice.paid'];
const iso = (ms: number) => new Date(ms).toISOString();

let store: EmbeddedStore;
const app = Fastify();

beforeAll(async () => {
  const dir = await tempDir('ck-console-scale-');
  const state = new StoreState();
  for (let i = 0; i < EVENTS; i++) {
    // One event a second over the last ~28 hours, the newest at T0.
    const at = T0 - (EVENTS - 1 - i) * 1000;
    const id = `evt_${String(i).padStart(6, '0')}`;
    const type = TYPES[i % TYPES.length] as string;
    state.apply({ t: 'event', at, event: { id, type, environment: 'test', createdAt: iso(at), receivedAt: iso(at), resourceKind: 'payment', resourceId: `pay_${i >> 2}`, body: eventBody(id, type, { id: `pay_${i >> 2}`, email: 'buyer@example.com' }) } });
    // All dispatched but the last 20; every 1,000th failed for good.
    if (i < EVENTS - 20) {
      state.apply({ t: 'claim', at, key: `event:${id}`, owner: 'w', leaseMs: 60_000 });
      state.apply(i % 1000 === 0 ? { t: 'fail', at, key: `event:${id}`, owner: 'w', error: 'handler threw' } : { t: 'complete', at, key: `event:${id}`, owner: 'w' });
    }
  }
  await writeSnapshot(dir, { journalGeneration: 0, data: state.snapshotData() });
  store = new EmbeddedStore({ dir, logger: silentLogger });
  await store.open();
  await app.register(checkoutConsole, { store, clock: () => new Date(T0) });
  await app.ready();
}, 120_000);

afterAll(async () => {
  await app.close();
  await store?.close();
  await removeTempDirs();
});

async function timed(url: string) {
  const started = performance.now();
  const response = await app.inject(url);
  return { response, ms: performance.now() - started };
}

describe('console at 100,000 stored events (embedded store)', () => {
  it('answers the overview and any page of every list quickly, with one page of rows', async () => {
    const urls = [
      '/checkout-kit/',
      '/checkout-kit/events',
      '/checkout-kit/events?page=1000',
      '/checkout-kit/events?type=payment.paid&page=400',
      '/checkout-kit/events?status=failed',
      '/checkout-kit/runs?status=failed&page=2',
      '/checkout-kit/events?resource=pay_24999',
    ];
    const figures: string[] = [];
    for (const url of urls) {
      await app.inject(url); // warm up
      const { response, ms } = await timed(url);
      figures.push(`${url} ${ms.toFixed(0)} ms ${(response.body.length / 1024).toFixed(0)} KB`);
      expect(response.statusCode, url).toBe(200);
      // Never the whole set in the page: at most one page of rows.
      expect((response.body.match(/<tr data-/g) ?? []).length, url).toBeLessThanOrEqual(50);
      expect(response.body.length, url).toBeLessThan(150_000);
      // Generous for a loaded 2-core machine; reading every event would take seconds.
      expect(ms, url).toBeLessThan(1500);
    }
    console.log(`console at ${EVENTS.toLocaleString('en-US')} events:\n  ${figures.join('\n  ')}`);

    const overview = (await app.inject('/checkout-kit/')).body;
    // Both windows include their first instant: 86,400 s and 3,600 s back, plus the event at T0.
    expect(overview).toContain('data-count="events-last-day">86,401<');
    expect(overview).toContain('data-count="events-last-hour">3,601<');
    expect(overview).toContain('data-count="backlog">20<');
    expect(overview).toContain('data-count="dispatch-failed">100<');
    const lastPage = (await app.inject('/checkout-kit/events?page=2000')).body;
    expect((lastPage.match(/<tr data-id=/g) ?? []).length).toBe(50);
    expect(lastPage).toContain('data-id="evt_000000"');
    expect(lastPage).not.toContain('id="next"');
    expect((await app.inject('/checkout-kit/events?status=failed&page=2')).body.match(/<tr data-id=/g)).toHaveLength(50);
  });
});

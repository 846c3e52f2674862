import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkoutConsole } from '../../src/console/index.js';
import { SqliteStore } from '../../src/store/index.js';
import { removeTempDirs, tempDir } from '../support/temp-dirs.js';
import { eventBody, T0 } from './seed.js';

// Lists stay fast at 100,000 events because paging and counting happen in the store's indexes.
const EVENTS = 100_000;
const TYPES = ['payment.created', 'payment.partially_paid', 'payment.paid', 'invoice.paid'];

let store: SqliteStore;
const app = Fastify();

beforeAll(async () => {
  store = new SqliteStore({ dir: await tempDir('ck-console-scale-') });
  await store.open();
  // Written in chunks that share commits, as a burst of deliveries would be.
  const CHUNK = 2000;
  for (let from = 0; from < EVENTS; from += CHUNK) {
    await Promise.all(
      Array.from({ length: Math.min(CHUNK, EVENTS - from) }, async (_, j) => {
        const i = from + j;
        // One event a second over the last ~28 hours, the newest at T0.
        const at = new Date(T0 - (EVENTS - 1 - i) * 1000);
        const id = `evt_${String(i).padStart(6, '0')}`;
        const type = TYPES[i % TYPES.length] as string;
        const event = {
          id,
          type,
          environment: 'test' as const,
          createdAt: at.toISOString(),
          receivedAt: at.toISOString(),
          resourceKind: 'payment' as const,
          resourceId: `pay_${i >> 2}`,
        };
        await store.insertEvent({ ...event, body: eventBody(id, type, { id: `pay_${i >> 2}`, email: 'buyer@example.com' }) }, at);
        // All dispatched but the last 20; every 1,000th failed for good.
        if (i < EVENTS - 20) {
          await store.claimRun(`event:${id}`, { owner: 'w', leaseMs: 60_000, now: at });
          if (i % 1000 === 0) await store.failRun(`event:${id}`, 'w', { error: 'handler threw', now: at });
          else await store.completeRun(`event:${id}`, 'w', at);
        }
      }),
    );
  }
  await app.register(checkoutConsole, { store, clock: () => new Date(T0) });
  await app.ready();
}, 300_000);

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

describe('console at 100,000 stored events (SQLite store)', () => {
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

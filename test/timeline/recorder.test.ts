import { afterEach, describe, expect, it } from 'vitest';
import type { Classification, NewsObservation } from '../../src/fulfillment/index.js';
import { silentLogger } from '../../src/log/index.js';
import { MemoryStore, type Store } from '../../src/store/index.js';
import { createTimelineRecorder } from '../../src/timeline/index.js';

const T0 = Date.parse('2031-03-04T10:00:00.000Z');
const stores: Store[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
});

async function openStore(): Promise<MemoryStore> {
  const store = new MemoryStore();
  await store.open();
  stores.push(store);
  return store;
}

const classification = (outcome: Classification['outcome'], received: string): Classification => ({
  outcome,
  late: false,
  amount: '10.00',
  amountReceived: received,
  shortfall: '0',
  surplus: '0',
});

/** News of payment `p-1` at T0 + `seconds`. */
function news(seconds: number, source: NewsObservation['source'], outcome: Classification['outcome'], received: string, advanced = false): NewsObservation {
  return {
    ok: true,
    kind: 'payment',
    id: 'p-1',
    source,
    outcome,
    advanced,
    classification: classification(outcome, received),
    at: new Date(T0 + seconds * 1000),
  };
}

const timelineOf = async (store: Store) => (await store.listActivity({ subject: 'payment:p-1' })).map((entry) => entry.data);

describe('createTimelineRecorder', () => {
  it('keeps one entry for news repeated word for word (a return page polling a pending payment), and every entry that says something new', async () => {
    const store = await openStore();
    const recorder = createTimelineRecorder({ store, logger: silentLogger });
    for (let poll = 0; poll < 12; poll++) recorder.news(news(poll * 5, 'return', 'pending', '0'));
    recorder.news(news(61, 'webhook', 'paid', '10.00', true));
    recorder.news(news(62, 'return', 'paid', '10.00'));
    recorder.news(news(67, 'return', 'paid', '10.00'));
    recorder.news({ ok: false, kind: 'payment', id: 'p-1', source: 'return', error: 'service down', at: new Date(T0 + 72_000) });
    recorder.news({ ok: false, kind: 'payment', id: 'p-1', source: 'return', error: 'service down', at: new Date(T0 + 77_000) });
    recorder.news(news(82, 'return', 'paid', '10.00'));
    await recorder.flush();
    expect((await timelineOf(store)).reverse()).toEqual([
      expect.objectContaining({ source: 'return', outcome: 'pending', advanced: false }),
      expect.objectContaining({ source: 'webhook', outcome: 'paid', advanced: true }),
      expect.objectContaining({ source: 'return', outcome: 'paid', advanced: false }),
      { source: 'return', ok: false, error: 'service down' },
      expect.objectContaining({ source: 'return', outcome: 'paid', advanced: false }),
    ]);
  });

  it('writes news again that it could not write the first time', async () => {
    const store = await openStore();
    const append = store.appendActivity.bind(store);
    let failures = 1;
    store.appendActivity = (entry, at) => (failures-- > 0 ? Promise.reject(new Error('disk full')) : append(entry, at));
    const recorder = createTimelineRecorder({ store, logger: silentLogger });
    recorder.news(news(0, 'return', 'pending', '0'));
    await recorder.flush();
    recorder.news(news(5, 'return', 'pending', '0'));
    await recorder.flush();
    expect(await timelineOf(store)).toEqual([expect.objectContaining({ source: 'return', outcome: 'pending' })]);
  });
});

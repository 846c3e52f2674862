import { describe, expect, it } from 'vitest';
import { FulfillmentEngine } from '../../src/fulfillment/index.js';
import { silentLogger } from '../../src/log/index.js';
import { retryFailed, runKeys } from '../../src/runs/index.js';
import { MemoryStore, type Store } from '../../src/store/index.js';
import { sampleEvent } from '../store/fixtures/sample-event.js';

const T0 = Date.parse('2030-01-01T00:00:00.000Z');

/** `count` fulfillment runs and `events` dispatch runs, all failed for good at T0. */
async function failedRuns(count: number, events = 0): Promise<{ store: MemoryStore; listed: number[] }> {
  const store = new MemoryStore();
  const at = new Date(T0);
  const fail = async (key: string) => {
    await store.claimRun(key, { owner: 'w', leaseMs: 60_000, now: at });
    await store.failRun(key, 'w', { error: 'gave up', now: at });
  };
  for (let i = 0; i < count; i++) {
    const key = runKeys.fulfillment('payment', `pay_${i}`, 'paid');
    await store.enqueueRun({ key, kind: 'fulfillment', data: {} }, at);
    await fail(key);
  }
  for (let i = 0; i < events; i++) {
    await store.insertEvent(sampleEvent(`evt_${i}`), at);
    await fail(runKeys.event(`evt_${i}`));
  }
  // Counts the pages read.
  const listed: number[] = [];
  const listRuns = store.listRuns.bind(store);
  store.listRuns = async (filter) => {
    const runs = await listRuns(filter);
    listed.push(runs.length);
    return runs;
  };
  return { store, listed };
}

describe('retryFailed', () => {
  it('pages through every failed run, however many pages, due now on the given clock', async () => {
    const { store, listed } = await failedRuns(7);
    const later = new Date(T0 + 60_000);
    expect(await retryFailed(store, { pageSize: 3, clock: () => later })).toBe(7);
    expect(listed).toEqual([3, 3, 1]);
    expect(await store.countRuns({ status: 'failed' })).toBe(0);
    expect(await store.listRuns({ status: 'pending', limit: 10 })).toEqual(
      Array.from({ length: 7 }, () => expect.objectContaining({ attempts: 0, nextAttemptAt: later.toISOString() })),
    );
  });

  it('pages past the default page of 100', async () => {
    const { store, listed } = await failedRuns(250);
    expect(await retryFailed(store, { clock: () => new Date(T0) })).toBe(250);
    expect(listed).toEqual([100, 100, 50]);
  });

  it('retries only the kind asked for, or one key', async () => {
    const { store } = await failedRuns(2, 3);
    expect(await retryFailed(store, { kind: 'event', clock: () => new Date(T0) })).toBe(3);
    expect(await store.countRuns({ kind: 'fulfillment', status: 'failed' })).toBe(2);
    expect(await retryFailed(store, { key: runKeys.fulfillment('payment', 'pay_1', 'paid'), clock: () => new Date(T0) })).toBe(1);
    expect(await retryFailed(store, { key: runKeys.fulfillment('payment', 'pay_1', 'paid'), clock: () => new Date(T0) })).toBe(0);
    expect(await retryFailed(store, { key: 'no-such-run' })).toBe(0);
    expect(await store.countRuns({ status: 'failed' })).toBe(1);
  });

  it('stops on a page where nothing could be retried instead of reading it forever', async () => {
    const { store: memory } = await failedRuns(5);
    const store: Store = Object.assign(Object.create(memory) as Store, { retryRun: async () => false });
    expect(await retryFailed(store, { pageSize: 2 })).toBe(0);
  });

  it('is what the engine retries with: every failed fulfillment run, past its old cap of 10,000 a call', async () => {
    const { store, listed } = await failedRuns(120, 2);
    const engine = new FulfillmentEngine({ store, handlers: {}, logger: silentLogger, clock: () => new Date(T0) });
    expect(await engine.retryFailed()).toBe(120);
    expect(listed).toEqual([100, 20]);
    expect(await store.countRuns({ kind: 'event', status: 'failed' })).toBe(2);
  });
});

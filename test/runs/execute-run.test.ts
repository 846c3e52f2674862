import { describe, expect, it, vi } from 'vitest';
import { backoffDelay, executeRun, type ExecuteRunOptions } from '../../src/runs/index.js';
import { MemoryStore, type Store } from '../../src/store/index.js';
import { captureLogger } from '../webhooks/helpers.js';

const T0 = Date.parse('2030-01-01T00:00:00.000Z');
const KEY = 'payment:pay_1:paid';
const iso = (ms: number) => new Date(ms).toISOString();

/** A memory store with one due run, a settable clock and the runner's options on that clock. */
async function setup(overrides: Partial<ExecuteRunOptions> = {}) {
  const store = new MemoryStore();
  let now = T0;
  const clock = () => new Date(now);
  await store.enqueueRun({ key: KEY, kind: 'fulfillment', data: {} }, clock());
  const logger = captureLogger();
  const options: ExecuteRunOptions = {
    owner: 'worker-1',
    leaseMs: 60_000,
    maxAttempts: 3,
    backoffMs: 1000,
    maxBackoffMs: 1500,
    completionRetries: 2,
    completionRetryMs: 1,
    clock,
    logger,
    ...overrides,
  };
  return { store, options, logger, advance: (ms: number) => void (now += ms), clock };
}

describe('executeRun', () => {
  it('claims the run, does the work once and stores the completion', async () => {
    const { store, options } = await setup();
    let calls = 0;
    const result = await executeRun(store, KEY, options, async (run) => {
      calls += 1;
      expect(run).toMatchObject({ key: KEY, status: 'running', owner: 'worker-1', attempts: 1, leaseUntil: iso(T0 + 60_000) });
      return { ok: true, value: 'shipped' };
    });
    expect(result).toMatchObject({ status: 'finished', value: 'shipped', completion: 'stored' });
    expect(await store.getRun(KEY)).toMatchObject({ status: 'done', completedAt: iso(T0) });
    expect(await executeRun(store, KEY, options, async () => ({ ok: true, value: 'again' }))).toEqual({ status: 'not-claimed' });
    expect(calls).toBe(1);
  });

  it('does not run work another worker holds the lease of', async () => {
    const { store, options } = await setup();
    await store.claimRun(KEY, { owner: 'other', leaseMs: 60_000, now: options.clock() });
    let called = false;
    expect(await executeRun(store, KEY, options, async () => ({ ok: !(called = true), error: 'x' }))).toEqual({ status: 'not-claimed' });
    expect(called).toBe(false);
    expect(await store.getRun(KEY)).toMatchObject({ owner: 'other', attempts: 1 });
  });

  it('retries a completion the store failed to write, under the same lease, and does the work once', async () => {
    const { store: memory, options, logger } = await setup();
    let failures = 2;
    const store: Store = Object.assign(Object.create(memory) as Store, {
      completeRun: async (key: string, owner: string, now?: Date) => {
        if (failures-- > 0) throw new Error('connection reset');
        return memory.completeRun(key, owner, now);
      },
    });
    let calls = 0;
    const result = await executeRun(store, KEY, options, async () => ({ ok: true, value: (calls += 1) }));
    expect(result).toMatchObject({ status: 'finished', completion: 'stored' });
    expect(calls).toBe(1);
    expect(await memory.getRun(KEY)).toMatchObject({ status: 'done', attempts: 1 });
    expect(logger.lines.filter((line) => line.level === 'warn')).toHaveLength(2);
  });

  it('finds a completion whose write landed but whose answer was lost', async () => {
    const { store: memory, options } = await setup();
    let first = true;
    const store: Store = Object.assign(Object.create(memory) as Store, {
      completeRun: async (key: string, owner: string, now?: Date) => {
        await memory.completeRun(key, owner, now);
        if (first) {
          first = false;
          throw new Error('answer lost');
        }
        return false;
      },
    });
    expect(await executeRun(store, KEY, options, async () => ({ ok: true, value: 1 }))).toMatchObject({ status: 'finished', completion: 'stored' });
  });

  it('says so when the completion could not be stored at all, leaving the run leased', async () => {
    const { store: memory, options, logger } = await setup();
    const store: Store = Object.assign(Object.create(memory) as Store, {
      completeRun: async () => {
        throw new Error('disk gone');
      },
    });
    expect(await executeRun(store, KEY, options, async () => ({ ok: true, value: 1 }))).toMatchObject({ status: 'finished', completion: 'unstored' });
    expect(await memory.getRun(KEY)).toMatchObject({ status: 'running', owner: 'worker-1' });
    expect(logger.lines.filter((line) => line.level === 'error').map((line) => line.obj)).toEqual([expect.objectContaining({ key: KEY, tries: 3 })]);
    // Each failed try is told, numbered from the first (made outside p-retry, then handed to it).
    expect(logger.lines.filter((line) => line.level === 'warn').map((line) => line.obj)).toEqual([
      expect.objectContaining({ key: KEY, attempt: 1, retriesLeft: 2 }),
      expect.objectContaining({ key: KEY, attempt: 2, retriesLeft: 1 }),
      expect.objectContaining({ key: KEY, attempt: 3, retriesLeft: 0 }),
    ]);
  });

  it.each([
    ['with completionRetries 0, a failed completion is tried once (and warned)', 0, new Error('disk gone'), 1],
    ['a programming error from the store (a TypeError) is not retried, as p-retry decides', 3, new TypeError('store.completeRun is not a function'), 1],
  ] as const)('%s', async (_name, completionRetries, failure, warned) => {
    const { store: memory, options, logger } = await setup({ completionRetries });
    let tries = 0;
    const store: Store = Object.assign(Object.create(memory) as Store, {
      completeRun: async () => {
        tries += 1;
        throw failure;
      },
    });
    expect(await executeRun(store, KEY, options, async () => ({ ok: true, value: 1 }))).toMatchObject({ status: 'finished', completion: 'unstored' });
    expect(tries).toBe(1);
    expect(logger.lines.filter((line) => line.level === 'warn')).toHaveLength(warned);
    expect(logger.lines.filter((line) => line.level === 'error').map((line) => line.obj)).toEqual([expect.objectContaining({ key: KEY, tries: 1 })]);
  });

  it('says so when the lease was lost before the completion', async () => {
    const { store, options, advance } = await setup();
    const result = await executeRun(store, KEY, options, async () => {
      advance(60_000);
      await store.claimRun(KEY, { owner: 'other', leaseMs: 60_000, now: options.clock() });
      return { ok: true, value: 1 };
    });
    expect(result).toMatchObject({ status: 'finished', completion: 'lease-lost' });
    expect(await store.getRun(KEY)).toMatchObject({ status: 'running', owner: 'other' });
  });

  it('backs off after each failed attempt, doubling up to maxBackoffMs, then gives up', async () => {
    const { store, options, advance } = await setup();
    const fail = async () => ({ ok: false as const, error: new Error('warehouse down') });

    const first = await executeRun(store, KEY, options, fail);
    expect(first).toMatchObject({ status: 'retrying', retryAt: iso(T0 + 1000) });
    expect(await store.getRun(KEY)).toMatchObject({ status: 'pending', lastError: 'warehouse down', nextAttemptAt: iso(T0 + 1000), owner: undefined });
    // Not due before its retry time.
    expect(await executeRun(store, KEY, options, fail)).toEqual({ status: 'not-claimed' });

    advance(1000);
    const second = await executeRun(store, KEY, options, fail);
    // 2000 ms by the doubling, capped at maxBackoffMs.
    expect(second).toMatchObject({ status: 'retrying', retryAt: iso(T0 + 1000 + 1500) });

    advance(1500);
    const third = await executeRun(store, KEY, options, fail);
    expect(third).toMatchObject({ status: 'failed', retryAt: undefined });
    expect(await store.getRun(KEY)).toMatchObject({ status: 'failed', attempts: 3, lastError: 'warehouse down' });
    advance(86_400_000);
    expect(await executeRun(store, KEY, options, fail)).toEqual({ status: 'not-claimed' });
  });

  it('gives up at once when the work says it never can succeed', async () => {
    const { store, options } = await setup();
    const result = await executeRun(store, KEY, options, async () => ({ ok: false, error: 'no stored body', giveUp: true }));
    expect(result).toMatchObject({ status: 'failed', error: 'no stored body', retryAt: undefined });
    expect(await store.getRun(KEY)).toMatchObject({ status: 'failed', attempts: 1, lastError: 'no stored body' });
  });

  it('stores and returns the failure as `explain` makes it, knowing the retry', async () => {
    const { store, options } = await setup({
      explain: (error, { attempt, maxAttempts, retryAt }) => new Error(`${String(error)} (attempt ${attempt} of ${maxAttempts}, retry at ${retryAt})`),
    });
    const result = await executeRun(store, KEY, options, async () => ({ ok: false, error: 'boom' }));
    const message = `boom (attempt 1 of 3, retry at ${iso(T0 + 1000)})`;
    expect(result.status === 'retrying' && result.error).toEqual(new Error(message));
    expect((await store.getRun(KEY))?.lastError).toBe(message);
  });

  it('passes a throw on (a store error, not a failed attempt) and leaves the run to its lease', async () => {
    const { store, options } = await setup();
    await expect(
      executeRun(store, KEY, options, async () => {
        throw new Error('store unreachable');
      }),
    ).rejects.toThrow('store unreachable');
    expect(await store.getRun(KEY)).toMatchObject({ status: 'running', owner: 'worker-1', lastError: undefined });
  });

  it('renews the lease while long work goes on, on the given clock', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    try {
      const { store, options, advance } = await setup({ leaseMs: 30 });
      const result = await executeRun(store, KEY, options, async () => {
        advance(5);
        // Past a third of the lease: one renewal is due.
        await vi.advanceTimersByTimeAsync(10);
        return { ok: true, value: (await store.getRun(KEY))?.leaseUntil };
      });
      // Renewed from the advanced clock: the lease of the claim alone ends at T0 + 30.
      expect(result).toMatchObject({ status: 'finished', value: iso(T0 + 5 + 30), completion: 'stored' });
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });
});

describe('backoffDelay', () => {
  it('doubles from the base after each attempt, never above the cap', () => {
    expect([1, 2, 3, 4, 5].map((attempt) => backoffDelay(attempt, 1000, 5000))).toEqual([1000, 2000, 4000, 5000, 5000]);
    expect(backoffDelay(0, 1000, 5000)).toBe(1000);
    expect(backoffDelay(11, 100)).toBe(102_400);
  });

  it('stays a number for a run retried past 1,024 attempts (an outage), a zero base included', () => {
    expect(backoffDelay(2000, 0, 600_000)).toBe(0);
    expect(backoffDelay(2000, 1000, 600_000)).toBe(600_000);
    expect(Number.isFinite(backoffDelay(5000, 1))).toBe(true);
  });
});

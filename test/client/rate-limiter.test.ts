import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RateLimiter } from '../../src/client/rate-limiter.js';

describe('RateLimiter', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  /** Start `count` calls at once; resolves with the (fake) time each one was let through. */
  function startTimes(limiter: RateLimiter, count: number): number[] {
    const times: number[] = [];
    for (let i = 0; i < count; i++) void limiter.acquire().then(() => times.push(Date.now() - start));
    return times;
  }
  let start = 0;

  it('lets calls start in arrival order, evenly spaced at maxRps', async () => {
    start = Date.now();
    const limiter = new RateLimiter({ maxRps: 10, now: () => Date.now() });
    const times = startTimes(limiter, 5);
    await vi.advanceTimersByTimeAsync(1000);
    expect(times).toEqual([0, 100, 200, 300, 400]);
  });

  it('regression: a timer that fires late lets the missed slots go, so the rate does not drift below maxRps', async () => {
    // The limiter's clock runs `lag` ms ahead of the timers: as if the event loop had been busy.
    let lag = 0;
    const limiter = new RateLimiter({ maxRps: 100, now: () => Date.now() + lag });
    let started = 0;
    for (let i = 0; i < 20; i++) void limiter.acquire().then(() => (started += 1));
    await vi.advanceTimersByTimeAsync(0);
    expect(started).toBe(1);
    lag = 50; // the next timer (due at 10 ms) fires 50 ms late, at 60 ms on the limiter's clock
    await vi.advanceTimersByTimeAsync(10);
    // The slots of 0, 10, …, 60 ms: seven calls by 60 ms, as on time (not two).
    expect(started).toBe(7);
    // And no more than the schedule: the next slot is at 70 ms.
    await vi.advanceTimersByTimeAsync(9);
    expect(started).toBe(7);
  });

  it('catches up at most 100 ms of missed slots', async () => {
    let lag = 0;
    const limiter = new RateLimiter({ maxRps: 100, now: () => Date.now() + lag });
    let started = 0;
    for (let i = 0; i < 100; i++) void limiter.acquire().then(() => (started += 1));
    await vi.advanceTimersByTimeAsync(0);
    lag = 1000; // a second-long stall
    await vi.advanceTimersByTimeAsync(10);
    // The first call, then 100 ms of slots (10) plus the current one, not a second's worth.
    expect(started).toBeGreaterThanOrEqual(11);
    expect(started).toBeLessThanOrEqual(12);
  });

  it('a 429 pauses every caller until Retry-After and halves the rate, once per incident', async () => {
    start = Date.now();
    const limiter = new RateLimiter({ maxRps: 10, now: () => Date.now() });
    await limiter.acquire();
    limiter.throttled(2000);
    limiter.throttled(2000); // a second 429 of the same incident
    expect(limiter.currentRps).toBe(5);
    const times = startTimes(limiter, 3);
    await vi.advanceTimersByTimeAsync(1999);
    expect(times).toEqual([]);
    await vi.advanceTimersByTimeAsync(1001);
    // At half the rate (about 200 ms apart), which starts winning back once the pause is over.
    expect(times[0]).toBe(2000);
    for (const gap of [times[1]! - times[0]!, times[2]! - times[1]!]) {
      expect(gap).toBeGreaterThan(190);
      expect(gap).toBeLessThanOrEqual(200);
    }
  });

  it('wins the rate back slowly without 429s, never above maxRps', async () => {
    const limiter = new RateLimiter({ maxRps: 20, recoverRpsPerSecond: 1, now: () => Date.now() });
    limiter.throttled(0);
    expect(limiter.currentRps).toBe(10);
    await vi.advanceTimersByTimeAsync(4000);
    expect(limiter.currentRps).toBeCloseTo(14);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(limiter.currentRps).toBe(20);
  });

  it('never drops below minRps however many incidents', () => {
    const limiter = new RateLimiter({ maxRps: 8, minRps: 1, now: () => Date.now() });
    for (let i = 0; i < 10; i++) {
      limiter.throttled(0);
      vi.advanceTimersByTime(1);
    }
    expect(limiter.currentRps).toBeGreaterThanOrEqual(1);
    expect(limiter.currentRps).toBeLessThan(1.1);
  });

  it('regression: a call aborted while waiting leaves the line at once and takes no turn', async () => {
    start = Date.now();
    const limiter = new RateLimiter({ maxRps: 10, now: () => Date.now() });
    limiter.throttled(5000);
    const controller = new AbortController();
    const aborted = limiter.acquire(controller.signal).then(
      () => 'started',
      (error: Error) => error.message,
    );
    const times = startTimes(limiter, 1);
    await vi.advanceTimersByTimeAsync(100);
    controller.abort(new Error('user gave up'));
    expect(await aborted).toBe('user gave up');
    expect(limiter.queued).toBe(1);
    await vi.advanceTimersByTimeAsync(5000);
    expect(times).toEqual([5000]);
  });

  it('refuses a rate that is not positive', () => {
    expect(() => new RateLimiter({ maxRps: 0 })).toThrow(/maxRps must be a positive number/);
  });
});

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RateLimiter, type RateLimiterOptions } from '../../src/client/rate-limiter.js';
import { createRng } from '../../src/sandbox/webhooks/faults.js';

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
    const limiter = new RateLimiter({ maxRps: 10, headroom: 0, now: () => Date.now() });
    const times = startTimes(limiter, 5);
    await vi.advanceTimersByTimeAsync(1000);
    expect(times).toEqual([0, 100, 200, 300, 400]);
  });

  it('a timer that fires late lets the missed slots go, so the rate does not drift below maxRps', async () => {
    // The limiter's clock runs `lag` ms ahead of the timers: as if the event loop had been busy.
    let lag = 0;
    const limiter = new RateLimiter({ maxRps: 100, headroom: 0, now: () => Date.now() + lag });
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
    const limiter = new RateLimiter({ maxRps: 100, headroom: 0, now: () => Date.now() + lag });
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
    const limiter = new RateLimiter({ maxRps: 10, headroom: 0, now: () => Date.now() });
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
    const limiter = new RateLimiter({ maxRps: 20, headroom: 0, recoverRpsPerSecond: 1, now: () => Date.now() });
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

  it('a call aborted while waiting leaves the line at once and takes no turn', async () => {
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

  it('paces 5% under maxRps by default, and climbs back to that pace after a 429', async () => {
    start = Date.now();
    const limiter = new RateLimiter({ maxRps: 100, now: () => Date.now() });
    expect(limiter.maxRps).toBe(100);
    expect(limiter.pacedRps).toBe(95);
    expect(limiter.currentRps).toBe(95);
    const times = startTimes(limiter, 20);
    await vi.advanceTimersByTimeAsync(1000);
    expect(times).toHaveLength(20);
    // 1000 / 95 = 10.53 ms apart; the timers round up to whole milliseconds.
    for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBeGreaterThanOrEqual(10);
    expect(times.at(-1)).toBeGreaterThanOrEqual(Math.floor((19 * 1000) / 95));
    limiter.throttled(0);
    expect(limiter.currentRps).toBe(47.5);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(limiter.currentRps).toBe(95);
  });

  it('a late timer catching up never puts more than the pace in any one-second span', async () => {
    // The limiter's clock runs `lag` ms ahead of the timers: the event loop was busy.
    let lag = 0;
    const limiter = new RateLimiter({ maxRps: 100, now: () => Date.now() + lag });
    const starts: number[] = [];
    for (let i = 0; i < 400; i++) void limiter.acquire().then(() => starts.push(Date.now() + lag));
    // A second on schedule, then the loop stalls for 100 ms just before its end: the catch-up
    // would let ~10 missed slots go at once, on top of a full second of starts.
    await vi.advanceTimersByTimeAsync(900);
    lag = 100;
    await vi.advanceTimersByTimeAsync(2000);
    expect(starts.length).toBeGreaterThan(250);
    for (const at of starts) {
      const inSpan = starts.filter((other) => other > at - 1000 && other <= at).length;
      expect(inSpan).toBeLessThanOrEqual(95);
    }
  });

  /**
   * A backlog through the limiter against a service that allows `limit` calls in each fixed
   * one-second window of its clock (429 with Retry-After: 1 beyond it), for `windows` seconds.
   * Seeded and on fake timers: the event loop stalls now and then (the timers fire late, as in
   * serve acknowledging a burst), and each call reaches the service 1–31 ms after it starts.
   */
  async function fixedWindowRun(limiterOptions: RateLimiterOptions, { limit = 100, windows = 30, seed = 7 } = {}) {
    const random = createRng(seed);
    const t0 = Date.now();
    let lag = 0;
    const now = () => Date.now() - t0 + lag;
    const limiter = new RateLimiter({ maxRps: limit, ...limiterOptions, now });
    // Where the service's windows begin, on the limiter's clock: anywhere.
    const phase = random() * 1000;
    const perWindow = new Map<number, number>();
    const result = { answered: 0, refused: 0 };
    const end = windows * 1000;
    const stalls = setInterval(() => {
      if (random() < 0.1) lag += random() * 100;
    }, 50);
    const caller = async () => {
      while (now() < end) {
        await limiter.acquire();
        const latency = 1 + random() * 30;
        const window = Math.floor((now() + latency + phase) / 1000);
        const count = (perWindow.get(window) ?? 0) + 1;
        perWindow.set(window, count);
        await new Promise((resolve) => setTimeout(resolve, 2 * latency));
        if (count > limit) {
          result.refused += 1;
          limiter.throttled(1000);
        } else result.answered += 1;
      }
    };
    // A flushed backlog: dispatch's 16 slots always have a call waiting.
    for (let i = 0; i < 16; i++) void caller();
    await vi.advanceTimersByTimeAsync(end);
    clearInterval(stalls);
    // Calls start until `end` on the limiter's clock: the rate is over the windows.
    return { ...result, seconds: windows };
  }

  it('against a limit of maxRps per fixed one-second window, a backlog paced by default gets no 429 in 30 windows and moves at the pace', async () => {
    const paced = await fixedWindowRun({});
    expect(paced.refused).toBe(0);
    expect(paced.answered / paced.seconds).toBeGreaterThan(0.9 * 95);
    // The same run paced at the limit itself: window edges get a call too many, and each 429
    // pauses every caller for a second.
    const atLimit = await fixedWindowRun({ headroom: 0 });
    expect(atLimit.refused).toBeGreaterThan(0);
    expect(atLimit.answered / atLimit.seconds).toBeLessThan(paced.answered / paced.seconds);
  });

  it('refuses a rate that is not positive, and a headroom outside [0, 1)', () => {
    expect(() => new RateLimiter({ maxRps: 0 })).toThrow(/maxRps must be a positive number/);
    for (const headroom of [-0.1, 1, Number.NaN]) expect(() => new RateLimiter({ headroom })).toThrow(/headroom must be a share of maxRps/);
  });
});

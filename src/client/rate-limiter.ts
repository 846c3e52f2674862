/** Calls started per second when no `maxRps` is given. */
export const DEFAULT_MAX_RPS = 50;

/** Share of `maxRps` left unused when no `headroom` is given. */
export const DEFAULT_HEADROOM = 0.05;

/** Options of the one limiter a service's calls share. */
export interface RateLimiterOptions {
  /** What the service allows, in calls per second; calls are paced a `headroom` below it. @default 50 */
  maxRps?: number;
  /**
   * Share of `maxRps` left unused: calls start at `maxRps × (1 − headroom)` a second, and no
   * one-second span holds more starts than that. A service that counts calls in fixed one-second
   * windows sees them arrive with some jitter; pacing exactly at its limit puts one call too many
   * in a window now and then, and each 429 pauses every caller for its `Retry-After`. 0.05
   * absorbs ~50 ms of jitter. From 0 (pace at `maxRps`) to below 1.
   * @default 0.05
   */
  headroom?: number;
  /** Lowest rate a run of 429s brings it down to. @default maxRps / 20, at least 0.2 */
  minRps?: number;
  /** Calls per second won back per second without a 429 (additive increase). @default maxRps / 20 */
  recoverRpsPerSecond?: number;
  /** Monotonic milliseconds. @default performance.now */
  now?: () => number;
}

/** How far behind its schedule the limiter may catch up (a burst of at most this much time's calls). */
const CATCH_UP_MS = 100;
/** The span the pace is held over: no span this long holds more starts than a second's worth at the current rate. */
const SPAN_MS = 1000;

/**
 * One rate limiter for every call to the service from this process: the client's confirm reads,
 * reconcile and the checkout helper start their calls through it. Calls start in arrival order,
 * evenly spaced at `maxRps × (1 − headroom)` (a timer that fired late catches up at most
 * `CATCH_UP_MS` of slots, and never past a second's worth of starts in any one-second span). A 429
 * pauses every caller until its `Retry-After` and halves the rate (once per pause); each second
 * without one wins back `recoverRpsPerSecond`, up to the paced rate: multiplicative decrease,
 * additive increase, as TCP does.
 */
export class RateLimiter {
  /** What the service allows (calls per second). */
  readonly maxRps: number;
  /** The rate calls start at when no 429 has slowed them: `maxRps × (1 − headroom)`. */
  readonly pacedRps: number;
  private readonly minRps: number;
  private readonly recoverRps: number;
  private readonly now: () => number;
  private rps: number;
  /** When the next call may start (ms, monotonic). */
  private nextStart = 0;
  /** No call starts before this (a `Retry-After`). */
  private pausedUntil = 0;
  /** Rate changes are measured from here. */
  private lastAdjust: number;
  /** Start times of the last `SPAN_MS`, oldest first, from `startsHead` on. */
  private readonly starts: number[] = [];
  private startsHead = 0;
  private readonly waiting: Array<() => void> = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(options: RateLimiterOptions = {}) {
    this.maxRps = options.maxRps ?? DEFAULT_MAX_RPS;
    if (!(this.maxRps > 0)) throw new RangeError(`maxRps must be a positive number of calls a second, got ${this.maxRps}.`);
    const headroom = options.headroom ?? DEFAULT_HEADROOM;
    if (!(headroom >= 0 && headroom < 1)) throw new RangeError(`headroom must be a share of maxRps from 0 to below 1 (e.g. 0.05), got ${headroom}.`);
    this.pacedRps = this.maxRps * (1 - headroom);
    this.minRps = Math.min(this.pacedRps, options.minRps ?? Math.max(this.maxRps / 20, 0.2));
    this.recoverRps = options.recoverRpsPerSecond ?? this.maxRps / 20;
    this.now = options.now ?? (() => performance.now());
    this.rps = this.pacedRps;
    this.lastAdjust = this.now();
  }

  /** The rate calls start at now. */
  get currentRps(): number {
    this.recover();
    return this.rps;
  }

  /** Calls waiting for their turn. */
  get queued(): number {
    return this.waiting.length;
  }

  /** Resolves when the caller may start its call (in arrival order); rejects with the signal's reason if aborted while waiting. */
  acquire(signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason);
      const onAbort = () => {
        // Leave the line: an aborted call takes no turn.
        const index = this.waiting.indexOf(go);
        if (index !== -1) this.waiting.splice(index, 1);
        if (this.waiting.length === 0 && this.timer) {
          clearTimeout(this.timer);
          this.timer = undefined;
        }
        reject(signal?.reason);
      };
      const go = () => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(go);
      this.schedule();
    });
  }

  /** The service said 429: nobody starts before `retryAfterMs` from now, and the rate drops. */
  throttled(retryAfterMs: number | undefined): void {
    const now = this.now();
    // One decrease per incident: the 429s of calls already under way carry no news.
    if (now >= this.pausedUntil) this.rps = Math.max(this.minRps, this.rps / 2);
    this.pausedUntil = Math.max(this.pausedUntil, now + (retryAfterMs ?? 1000 / this.rps));
    this.lastAdjust = this.pausedUntil;
    // No catching up on slots missed while paused.
    this.nextStart = Math.max(this.nextStart, this.pausedUntil);
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    this.schedule();
  }

  private recover(): void {
    const now = this.now();
    if (now <= this.lastAdjust || this.rps >= this.pacedRps) return;
    this.rps = Math.min(this.pacedRps, this.rps + ((now - this.lastAdjust) / 1000) * this.recoverRps);
    this.lastAdjust = now;
  }

  /**
   * The earliest a call may start so that the last `SPAN_MS` hold no more than a second's worth
   * of starts at the current rate: a catch-up burst right after a second that was on schedule
   * would otherwise put up to `CATCH_UP_MS` more of them in one second, as a fixed-window
   * limit counts them.
   */
  private spanAllows(now: number): number {
    const { starts } = this;
    while (this.startsHead < starts.length && starts[this.startsHead]! <= now - SPAN_MS) this.startsHead += 1;
    if (this.startsHead > 1024 && this.startsHead * 2 > starts.length) {
      starts.splice(0, this.startsHead);
      this.startsHead = 0;
    }
    const most = Math.max(1, Math.floor(this.rps));
    const inSpan = starts.length - this.startsHead;
    return inSpan < most ? now : starts[starts.length - most]! + SPAN_MS;
  }

  /** `late`: a timer fired (or a catch-up is under way), so slots missed since `nextStart` may still go. */
  private schedule(late = false): void {
    if (this.timer || this.waiting.length === 0) return;
    const now = this.now();
    this.recover();
    const at = Math.max(now, this.nextStart, this.pausedUntil, this.spanAllows(now));
    if (at <= now) {
      this.release(now, late);
      return;
    }
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.schedule(true);
      },
      Math.ceil(at - now),
    );
  }

  private release(now: number, late: boolean): void {
    const next = this.waiting.shift();
    // Slots follow a schedule, not the moment a timer fired: a timer that fires late (the event
    // loop was busy acknowledging a burst) lets the missed slots go now, up to CATCH_UP_MS of
    // them, so the achieved rate stays at the paced one instead of drifting below it. A call
    // that finds the limiter idle starts a fresh schedule (no burst).
    this.nextStart = (late ? Math.max(this.nextStart, now - CATCH_UP_MS) : now) + 1000 / this.rps;
    this.starts.push(now);
    next?.();
    this.schedule(late);
  }
}

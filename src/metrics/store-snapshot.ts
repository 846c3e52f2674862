import { recentPasses, type RecordedPass } from '../reconcile/passes.js';
import type { Store, StoreSummary } from '../store/index.js';

/** What the store says at one moment: the overview's counts and the recent reconcile passes. */
export interface StoreSnapshot {
  at: Date;
  summary: StoreSummary;
  lastPass: RecordedPass | undefined;
  lastSuccessfulPass: RecordedPass | undefined;
}

/**
 * Reads `StoreSnapshot`s, reusing one for `ttlMs`: a Prometheus scrape reads a dozen gauges and
 * several scrapers may poll, but the store is asked once per interval. Concurrent callers share
 * the read in flight.
 */
export class StoreSnapshots {
  /** `until` is monotonic (performance.now): an injected clock may stand still in tests. */
  private cached: { snapshot: StoreSnapshot; until: number } | undefined;
  private inFlight: Promise<StoreSnapshot> | undefined;

  constructor(
    private readonly store: Store,
    private readonly clock: () => Date,
    private readonly ttlMs = 5000,
  ) {}

  async get(): Promise<StoreSnapshot> {
    if (this.cached && performance.now() < this.cached.until) return this.cached.snapshot;
    this.inFlight ??= this.read(this.clock()).finally(() => (this.inFlight = undefined));
    return this.inFlight;
  }

  private async read(now: Date): Promise<StoreSnapshot> {
    const summary = await this.store.summarize({ now });
    const passes = await recentPasses(this.store);
    const snapshot = { at: now, summary, lastPass: passes.last, lastSuccessfulPass: passes.lastSuccess };
    this.cached = { snapshot, until: performance.now() + this.ttlMs };
    return snapshot;
  }
}

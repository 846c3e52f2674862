import type { NewsSource, Outcome, ResourceKind } from '../store/index.js';
import type { Classification, HandlerOutcome } from './outcome.js';

/** One piece of news the engine processed: what the service said and what was stored, or why it could not be read. */
export type NewsObservation =
  | {
      ok: true;
      kind: ResourceKind;
      id: string;
      source: NewsSource;
      /** The stored outcome after this news. */
      outcome: Outcome;
      /** Whether this news moved the outcome forward. */
      advanced: boolean;
      classification: Classification;
      at: Date;
    }
  | {
      ok: false;
      kind: ResourceKind;
      id: string;
      source: NewsSource;
      error: string;
      /** The service was read, but the news spoke for another merchant than the resource's: ignored. */
      ignored?: boolean;
      at: Date;
    };

/** One call of a merchant's handler and how it ended. */
export interface HandlerObservation {
  key: string;
  kind: ResourceKind;
  id: string;
  outcome: HandlerOutcome;
  source: NewsSource;
  /** 1 for the first call of this run. */
  attempt: number;
  /** `failed`: given up (after `maxAttempts`), waiting for `checkout-kit retry`. */
  result: 'completed' | 'retrying' | 'failed';
  error: string | undefined;
  durationMs: number;
  at: Date;
}

/**
 * Told what the engine did, for metrics, alerts and the operator's timeline. Called
 * synchronously after the fact; whatever it throws is logged and ignored, so observing never
 * changes what the engine decides. Work that takes time (a store write) belongs on a queue.
 */
export interface EngineObserver {
  /** Told of each piece of news the engine processed. */
  news?(observation: NewsObservation): void;
  /** Told of each call of a merchant's handler and how it ended. */
  handler?(observation: HandlerObservation): void;
}

/**
 * One observer that tells several, added and removed at any time: the engine is built before the
 * metrics, the alerts and the timeline that watch it (`serve` adds them once its app is up).
 */
export class EngineObservers implements EngineObserver {
  private readonly observers = new Set<EngineObserver>();

  /** Start telling `observer`; returns a function that stops. */
  add(observer: EngineObserver): () => void {
    this.observers.add(observer);
    return () => void this.observers.delete(observer);
  }

  /** Tell every observer of this news. */
  news(observation: NewsObservation): void {
    for (const observer of this.observers) observer.news?.(observation);
  }

  /** Tell every observer of this handler call. */
  handler(observation: HandlerObservation): void {
    for (const observer of this.observers) observer.handler?.(observation);
  }
}

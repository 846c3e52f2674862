import type { EngineObserver, HandlerObservation, NewsObservation } from '../fulfillment/engine-observer.js';
import type { Logger } from '../log/index.js';
import type { NewActivity, Store } from '../store/index.js';
import { HANDLER_KIND, NEWS_KIND, resourceSubject, type HandlerData, type NewsData } from './activity-data.js';

/** The engine observer that keeps each resource's timeline in the store, and what to wait for before closing it. */
export interface TimelineRecorder extends EngineObserver {
  news(observation: NewsObservation): void;
  handler(observation: HandlerObservation): void;
  /** Resolves once every entry handed over so far is written (call before closing the store). */
  flush(): Promise<void>;
}

/** How many resources' last news a recorder remembers to leave out repeats of it: the oldest is forgotten first. */
const REMEMBERED_RESOURCES = 10_000;

/**
 * Writes what the engine learned and each handler call to the store, for the console's payment
 * timeline. Writes go behind the engine's back (never awaited by it: a slow store must
 * not slow fulfilment) on the engine's clock; a failed write is logged and the timeline has a gap.
 *
 * News that repeats the last news this process recorded for the resource word for word is left
 * out: a buyer's return page asks every few seconds while a payment is pending, and a timeline of
 * those alone would push the news and handler calls that matter out of the console's view.
 */
export function createTimelineRecorder(options: { store: Store; logger: Logger }): TimelineRecorder {
  const pending = new Set<Promise<void>>();
  const lastNews = new Map<string, string>();
  let warned = false;

  function write(entry: NewActivity, at: Date, onFailure?: () => void): void {
    const promise = options.store.appendActivity(entry, at).then(
      () => void (warned = false),
      (error: unknown) => {
        onFailure?.();
        // Once per run of failures: the store's own errors are reported by whoever needed the write.
        if (!warned) options.logger.warn({ err: String(error) }, `could not keep the console timeline: ${String(error)}`);
        warned = true;
      },
    );
    pending.add(promise);
    void promise.finally(() => pending.delete(promise));
  }

  return {
    news(observation) {
      const data: NewsData = observation.ok
        ? {
            source: observation.source,
            ok: true,
            outcome: observation.outcome,
            advanced: observation.advanced,
            amount: observation.classification.amount,
            amountReceived: observation.classification.amountReceived,
            late: observation.classification.late,
          }
        : { source: observation.source, ok: false, error: observation.error, ...(observation.ignored ? { ignored: true } : {}) };
      const subject = resourceSubject(observation.kind, observation.id);
      const said = JSON.stringify(data);
      if (lastNews.get(subject) === said) return;
      lastNews.delete(subject);
      lastNews.set(subject, said);
      if (lastNews.size > REMEMBERED_RESOURCES) lastNews.delete(lastNews.keys().next().value!);
      // Unwritten, it is not a repeat of anything on the timeline.
      write({ subject, kind: NEWS_KIND, data }, observation.at, () => {
        if (lastNews.get(subject) === said) lastNews.delete(subject);
      });
    },
    handler(observation) {
      const data: HandlerData = {
        key: observation.key,
        outcome: observation.outcome,
        source: observation.source,
        attempt: observation.attempt,
        result: observation.result,
        ...(observation.error === undefined ? {} : { error: observation.error }),
        durationMs: Math.round(observation.durationMs),
      };
      write({ subject: resourceSubject(observation.kind, observation.id), kind: HANDLER_KIND, data }, observation.at);
    },
    async flush() {
      while (pending.size > 0) await Promise.allSettled([...pending]);
    },
  };
}

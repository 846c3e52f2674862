import pRetry from 'p-retry';
import { messageOf } from '../errors/index.js';
import type { Logger } from '../log/index.js';
import type { Run, Store } from '../store/types.js';
import { backoffDelay } from './backoff.js';
import { keepRenewing } from './keep-renewing.js';

/** How leased work is claimed, kept, retried and given up: the settings `executeRun` runs with. */
export interface RunSettings {
  /** Written on the lease; only the owner may renew, complete or fail the run. */
  owner: string;
  /** How long a claim holds before another worker may take the run over; renewed while the work goes on. */
  leaseMs: number;
  /** Attempts before a failing run is marked `failed` (given up, retried by command). */
  maxAttempts: number;
  /** First retry delay after a failed attempt, doubling (`backoffDelay`). */
  backoffMs: number;
  /** Longest retry delay. */
  maxBackoffMs: number;
  /** Further tries at storing a completion when the store fails; the lease stays renewed meanwhile. */
  completionRetries: number;
  /** First delay between completion tries, doubling. */
  completionRetryMs: number;
  /** The one clock of claims, renewals, completions and due times. */
  clock: () => Date;
  /** Where the completion's retries and failures are logged. */
  logger: Logger;
}

/** How a completion is retried unless told otherwise: 5 more tries, 100 ms apart at first, doubling. */
export const COMPLETION_RETRIES = { completionRetries: 5, completionRetryMs: 100 } as const satisfies Partial<RunSettings>;

/** What the runner decided about a failed attempt, before storing it. */
export interface FailureDecision {
  /** 1 for the first attempt. */
  attempt: number;
  maxAttempts: number;
  /** When the next attempt is due; undefined when the run is given up. */
  retryAt: string | undefined;
}

export interface ExecuteRunOptions extends RunSettings {
  /** Told once when the lease could not be renewed while the work ran. */
  onLeaseLost?: (reason: string) => void;
  /**
   * The stop signal of the loop the run is worked in. Work that throws once it is aborted gave up
   * because of it: no failure is stored, the lease is given back, and the result is `stopped`.
   */
  signal?: AbortSignal | undefined;
  /**
   * What a failed attempt is stored (its message) and returned as, once the retry is decided.
   * @default the work's error as it is
   */
  explain?: (error: unknown, decision: FailureDecision) => unknown;
}

/**
 * How one attempt of the work ended. A failure is retried with backoff (or given up after
 * `maxAttempts`, or at once with `giveUp`; never with `keepTrying`, a failure that is not the
 * work's own, such as a service that cannot be reached, retried at the backoff until it passes);
 * a throw is not an attempt's failure but the runner's (a store error): it is passed on, and the
 * run stays leased until its lease runs out.
 */
export type AttemptResult<T> = { ok: true; value: T } | { ok: false; error: unknown; giveUp?: boolean; keepTrying?: boolean };

/**
 * What became of the run. `not-claimed`: another worker holds it, it is not due, or it is finished.
 * `finished`: the work succeeded; `completion` says whether that was stored (`lease-lost`: the lease
 * ran out first, another worker may do the work again; `unstored`: every try failed, the run is
 * done again once its lease runs out).
 */
export type RunResult<T> =
  | { status: 'not-claimed' }
  | { status: 'stopped'; run: Run }
  | { status: 'finished'; run: Run; value: T; completion: 'stored' | 'lease-lost' | 'unstored' }
  | { status: 'retrying' | 'failed'; run: Run; error: unknown; retryAt: string | undefined };

/**
 * The one runner of leased work (dispatch runs and fulfillment runs alike): claim the run `key`,
 * keep its lease while `work` runs, then store the completion (retried while the lease holds, so a
 * passing store error never does the work twice), or the failure with its backoff or the give-up.
 * Callers supply only the work, as graphile-worker's one loop runs named tasks.
 */
export async function executeRun<T>(
  store: Store,
  key: string,
  options: ExecuteRunOptions,
  work: (run: Run) => Promise<AttemptResult<T>>,
): Promise<RunResult<T>> {
  const { owner, leaseMs, clock } = options;
  const run = await store.claimRun(key, { owner, leaseMs, now: clock() });
  if (!run) return { status: 'not-claimed' };
  // Renewed every third of its length while the work runs, so a handler slower than `leaseMs` is not taken over (and run twice).
  const stopRenewing = keepRenewing({ ttlMs: leaseMs, renew: () => store.renewLease(key, owner, leaseMs, clock()), onLost: options.onLeaseLost });
  let attempt: AttemptResult<T>;
  try {
    attempt = await work(run);
  } catch (error) {
    stopRenewing();
    if (!options.signal?.aborted) throw error;
    // Give the lease back (it ends now): the next start, or another process, runs it at once
    // instead of after `leaseMs`. The claim counted as an attempt, as a crash's does.
    const givenBack = await store.renewLease(key, owner, 0, clock()).catch(() => false);
    options.logger.info(
      { key },
      `Stopped while running ${key}: it runs again at the next start${givenBack ? '' : ` (once its lease runs out, within ${leaseMs} ms)`}.`,
    );
    return { status: 'stopped', run };
  }
  try {
    if (attempt.ok) return { status: 'finished', run, value: attempt.value, completion: await storeCompletion(store, key, options) };
    const now = clock();
    const outage = attempt.keepTrying === true;
    // An outage's attempts never count toward giving up; the backoff still grows with every attempt.
    const counted = run.attempts - run.outageAttempts;
    const willRetry = !attempt.giveUp && (outage || counted < options.maxAttempts);
    const retryAt = willRetry ? new Date(now.getTime() + backoffDelay(run.attempts, options.backoffMs, options.maxBackoffMs)).toISOString() : undefined;
    const error = options.explain
      ? options.explain(attempt.error, { attempt: outage ? run.attempts : counted, maxAttempts: options.maxAttempts, retryAt })
      : attempt.error;
    await store.failRun(key, owner, { error: messageOf(error), retryAt, now, outage });
    return { status: willRetry ? 'retrying' : 'failed', run, error, retryAt };
  } finally {
    stopRenewing();
  }
}

/**
 * Mark the run done after its work succeeded, retrying a failing store with backoff. Only when
 * every try fails does the run stay leased; its work is then done again after the lease.
 */
async function storeCompletion(store: Store, key: string, options: ExecuteRunOptions): Promise<'stored' | 'lease-lost' | 'unstored'> {
  const { logger, owner, clock } = options;
  let tries = 0;
  const tryOnce = async () => {
    tries += 1;
    if (await store.completeRun(key, owner, clock())) return true;
    // A retry after a write that landed but whose answer was lost finds the run done.
    return tries > 1 && (await store.getRun(key))?.status === 'done';
  };
  try {
    let held: boolean;
    // The first try outside p-retry, which costs ~15 µs of set-up per call: nearly every completion
    // is stored at once, and a burst's dispatch stores two per payment. A failed first try is
    // handed to p-retry as its own first attempt, so the warnings, the schedule (completionRetryMs,
    // doubling) and which errors are retried stay exactly p-retry's.
    try {
      held = await tryOnce();
    } catch (error) {
      let first: { error: unknown } | undefined = { error };
      held = await pRetry(
        async () => {
          if (first) {
            const { error: failed } = first;
            first = undefined;
            throw failed;
          }
          return tryOnce();
        },
        {
          retries: options.completionRetries,
          minTimeout: options.completionRetryMs,
          factor: 2,
          onFailedAttempt: ({ error: failed, attemptNumber, retriesLeft }) =>
            logger.warn({ key, err: failed, attempt: attemptNumber, retriesLeft }, 'could not store the completion of a handler that returned; trying again'),
        },
      );
    }
    return held ? 'stored' : 'lease-lost';
  } catch (error) {
    logger.error(
      { key, err: error, tries },
      `handler returned but its completion could not be stored after ${tries} tries: it will be called again for ${key} once its lease runs out. ` +
        'Check the store; `checkout-kit runs` shows the run.',
    );
    return 'unstored';
  }
}

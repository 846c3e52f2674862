import { setMaxListeners } from 'node:events';
import { parseRunKey } from '../domain/index.js';
import type { Logger } from '../log/index.js';
import type { Run, Store } from '../store/types.js';

/**
 * How one unit of work ended. `skipped`: another worker holds it, it is not due, or it is finished.
 * `stopped`: the loop stopped while the work waited, and it gave up; its lease is given back.
 * `error`: the store failed; the run stays due for a later pass.
 */
export type UnitOutcome = 'done' | 'retry' | 'failed' | 'skipped' | 'error' | 'stopped';

export interface TaskContext {
  /** Aborted when the loop stops: work waiting on something slow gives up by throwing its reason. */
  signal: AbortSignal;
  /** What `notify` kept for this run (an event just received), to save reading it back. */
  kept: unknown;
  /**
   * Run this queued run in the same slot once the current one is settled, under its own claim and
   * lease: work that one unit queues for another starts at once, without nesting their leases.
   */
  runNext(key: string): void;
}

/** A named task: runs the unit `key` through `executeRun` (claim, keep the lease, complete or fail). */
export type Task = (key: string, context: TaskContext) => Promise<UnitOutcome>;

export interface RunLoopOptions {
  store: Store;
  /** Units run at once, started from the store's queue oldest first. */
  concurrency: number;
  clock: () => Date;
  logger: Logger;
  /** The task of each kind of run; a kind without one is left to whoever runs it. */
  tasks: Partial<Record<Run['kind'], Task>>;
}

export interface RunLoop {
  /** A run was just queued (with what its task may reuse): make sure the queue is worked on. Never waits. */
  notify(key: string, kept?: unknown): void;
  /** Start what is due now (up to the concurrency) without waiting for it; resolves with how many started. */
  kick(): Promise<number>;
  /** Run every due run once, `concurrency` at a time; resolves with how many were run once none is left. */
  drain(): Promise<number>;
  /** Stop starting units (those in flight go on); `resume()` starts again. */
  pause(): void;
  /** Pause, and abort the signal given to the units in flight. */
  stop(): void;
  resume(): void;
  /** Give runs of `kind` to `task` from now on. */
  addTask(kind: Run['kind'], task: Task): void;
  /** Remember a promise so that `idle()` waits for it. */
  track<T>(promise: Promise<T>): Promise<T>;
  /** Resolves once nothing is in flight. */
  idle(): Promise<void>;
}

/** Values kept in memory between a run's notice and its start, per unit of concurrency. */
const KEPT_PER_SLOT = 4;

/**
 * The controller whose signal every unit in flight is given. Each unit listens to it in a few
 * places at once (a confirm read's coalescer, rate limiter, request and retry wait): room for that.
 */
function stopController(concurrency: number): AbortController {
  const controller = new AbortController();
  setMaxListeners(Math.max(10, 4 * concurrency + 8), controller.signal);
  return controller;
}

/**
 * The one loop of leased work, as graphile-worker's: the store is the queue, each due run goes to
 * the task of its kind. The process keeps only what is in flight, a page of due keys read ahead and
 * a few values kept from `notify`, so memory does not grow with a backlog.
 */
export function createRunLoop(options: RunLoopOptions): RunLoop {
  const { store, concurrency, clock, logger } = options;
  const tasks = { ...options.tasks };
  const inFlight = new Set<Promise<unknown>>();
  let stopping = stopController(concurrency);
  const active = new Map<string, Promise<UnitOutcome>>();
  const kept = new Map<string, unknown>();
  /** Due keys read ahead from the store, oldest first: one queue read per page, not per unit. */
  let ahead: string[] = [];
  let paused = false;
  /** Units this process ran (claimed and worked), for `drain`'s answer. */
  let ranCount = 0;
  let filling: Promise<void> | undefined;
  let refill = false;
  /**
   * The last read held the whole due queue and nothing was notified since: a unit finishing need
   * not read the queue again (runs that fall due later, or come from other processes, are the
   * poll's: `kick`).
   */
  let readAll = false;
  /** Counts `notify` calls: a read that began before the latest notice cannot have seen its run. */
  let notices = 0;
  const pageSize = concurrency * KEPT_PER_SLOT;

  function track<T>(promise: Promise<T>): Promise<T> {
    inFlight.add(promise);
    const forget = () => inFlight.delete(promise);
    promise.then(forget, forget);
    return promise;
  }

  const kindOf = (key: string): Run['kind'] | undefined => parseRunKey(key)?.kind;

  /** One unit, then those it asked to run next, each under its own claim. */
  async function runUnit(key: string, kind: Run['kind']): Promise<UnitOutcome> {
    const task = tasks[kind];
    if (!task) return 'skipped';
    const next: string[] = [];
    const value = kept.get(key);
    kept.delete(key);
    const { signal } = stopping;
    const outcome = await task(key, { signal, kept: value, runNext: (nextKey) => void next.push(nextKey) }).catch((error: unknown) => {
      // Given up because the loop is stopping (`executeRun` gave the lease back): no failure.
      if (signal.aborted) return 'stopped' as const;
      // A store failure: the run stays claimable (pending, or its lease runs out) for a later pass.
      logger.error({ key, err: error }, `Running ${key} failed: ${String(error)}`);
      return 'error' as const;
    });
    for (const nextKey of next) {
      const nextKind = kindOf(nextKey);
      if (paused || !nextKind || active.has(nextKey)) continue;
      // Left due if it cannot run here: the queue's next read or poll finds it.
      await runUnit(nextKey, nextKind);
    }
    return outcome;
  }

  function start(key: string, kind: Run['kind']): Promise<UnitOutcome> {
    const promise = track(runUnit(key, kind));
    active.set(key, promise);
    void promise.then((outcome) => {
      active.delete(key);
      if (outcome === 'done' || outcome === 'retry' || outcome === 'failed') ranCount += 1;
      // A store failure leaves the run due: the poll tries it again, not a hot loop here.
      if (outcome !== 'error' && outcome !== 'stopped') wake();
    });
    return promise;
  }

  /**
   * Start due runs, oldest first, up to the free slots. `skip` holds keys not to start again (one
   * `drain` tries each run once); `dueBy` bounds what counts as due.
   */
  async function fill(skip?: Set<string>, dueBy?: string, trustLastRead = false): Promise<Array<Promise<UnitOutcome>>> {
    const started: Array<Promise<UnitOutcome>> = [];
    const kinds = Object.keys(tasks) as Array<Run['kind']>;
    if (kinds.length === 0) return started;
    for (let read = false; ; read = true) {
      while (!paused && active.size < concurrency && ahead.length > 0) {
        const key = ahead.shift() as string;
        const kind = kindOf(key);
        if (!kind || active.has(key) || skip?.has(key)) continue;
        skip?.add(key);
        started.push(start(key, kind));
      }
      if (paused || active.size >= concurrency || read || (trustLastRead && readAll)) return started;
      const limit = pageSize + active.size;
      const noticesBefore = notices;
      // The kinds named, never left out: the active runs' index leads with the kind, and without
      // it every read of the queue would scan every run ever made.
      const due = await store.listRuns({ kind: kinds, status: ['pending', 'running'], dueBy: dueBy ?? clock().toISOString(), limit });
      // stop() may have come while the queue was being read.
      if (paused) return started;
      ahead = due.filter((run) => tasks[run.kind] && !active.has(run.key)).map((run) => run.key);
      readAll = due.length < limit && noticesBefore === notices;
      // The whole due queue fits in the page: a kept value not in it was run elsewhere.
      if (due.length < limit) for (const key of kept.keys()) if (!active.has(key) && !ahead.includes(key)) kept.delete(key);
    }
  }

  /** Fill free slots now, once per burst of wake-ups. */
  function wake(): void {
    if (paused) return;
    if (filling) {
      refill = true;
      return;
    }
    filling = track(
      (async () => {
        do {
          refill = false;
          await fill(undefined, undefined, true);
        } while (refill && active.size < concurrency);
      })()
        .catch((error: unknown) => logger.error({ err: error }, `Could not read the run queue: ${String(error)}`))
        .finally(() => (filling = undefined)),
    );
  }

  let wakeScheduled = false;
  function notify(key: string, value?: unknown): void {
    // A bounded cache of the oldest waiting values (the next to go); later ones are read back.
    if (value !== undefined && kept.size < pageSize) kept.set(key, value);
    notices += 1;
    readAll = false;
    // After the current turn: an adapter writes its response before any work starts.
    if (wakeScheduled) return;
    wakeScheduled = true;
    void track(
      new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
        wakeScheduled = false;
        wake();
      }),
    );
  }

  async function kick(): Promise<number> {
    if (paused) return 0;
    return (await fill()).length;
  }

  async function drain(): Promise<number> {
    const before = ranCount;
    const tried = new Set<string>();
    // What is due when called: a stream of new runs arriving meanwhile does not keep it going.
    const dueBy = clock().toISOString();
    for (;;) {
      const started = await fill(tried, dueBy);
      if (started.length === 0 && active.size === 0) break;
      // Wait for a slot; what the background pump starts meanwhile counts too.
      await Promise.race(started.length > 0 ? started : active.values());
      if (paused) {
        await Promise.all(active.values());
        break;
      }
    }
    return ranCount - before;
  }

  async function idle(): Promise<void> {
    while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
  }

  return {
    notify,
    kick,
    drain,
    pause: () => void (paused = true),
    stop: () => {
      paused = true;
      stopping.abort(new Error('the run loop is stopping'));
    },
    resume: () => {
      paused = false;
      if (stopping.signal.aborted) stopping = stopController(concurrency);
    },
    addTask: (kind, task) => void (tasks[kind] = task),
    track,
    idle,
  };
}

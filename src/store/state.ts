import { eventIdOf, runKeys } from '../runs/keys.js';
import { eventRow, receivedAtOf, receivedMs, recordOf, withoutBody, type EventRow } from './event-row.js';
import {
  ACTIVITY_KEPT_PER_SUBJECT,
  OUTCOME_RANK,
  type Activity,
  type ActivityFilter,
  type CheckoutAttempt,
  type DeadLetter,
  type EventFilter,
  type NewActivity,
  type NewCheckoutAttempt,
  type NewRun,
  type ResourceKind,
  type ResourceFilter,
  type ResourceRecord,
  type ResourceUpdate,
  type Run,
  type RunCountFilter,
  type RunFilter,
  type StoredEvent,
  type StoreSummary,
} from './types.js';

/**
 * Every change to a store, as a plain JSON record. Applying the same ops in the same order to an
 * empty state always gives the same state: that is what lets the embedded store keep a journal of
 * ops and replay it (its own, or another process's) instead of rewriting history.
 * Each op carries the time it was made (`at`, ms since epoch) so replay never reads the clock.
 */
export type Op =
  | { t: 'event'; at: number; event: StoredEvent }
  | { t: 'dead'; at: number; letter: DeadLetter }
  | { t: 'enqueue'; at: number; run: NewRun }
  | { t: 'claim'; at: number; key: string; owner: string; leaseMs: number }
  | { t: 'complete'; at: number; key: string; owner: string }
  | { t: 'renew'; at: number; key: string; owner: string; leaseMs: number }
  | { t: 'fail'; at: number; key: string; owner: string; error: string; retryAt?: string | undefined }
  | { t: 'retry'; at: number; key: string }
  | { t: 'resource'; at: number; update: ResourceUpdate }
  | { t: 'attempt'; at: number; attempt: NewCheckoutAttempt }
  | { t: 'attemptDone'; at: number; orderId: string; resourceId: string; checkoutUrl: string | undefined }
  | { t: 'attemptRefused'; at: number; orderId: string; number: number }
  | { t: 'lock'; at: number; name: string; owner: string; ttlMs: number }
  | { t: 'unlock'; at: number; name: string; owner: string }
  | { t: 'prune'; at: number; payloadsBefore?: string | undefined; eventsBefore?: string | undefined }
  | { t: 'activity'; at: number; entry: NewActivity };

/** What applying an op did. `changed` false means nothing needs journaling. */
export interface OpResult<T = unknown> {
  changed: boolean;
  value: T;
}

/**
 * Where a body kept outside the state lives: the embedded store leaves each body in the journal
 * line that brought it, as a JSON string literal of `len` bytes at byte `off` of journal segment
 * `seg`, so that neither the heap nor the snapshot holds every body ever received.
 */
export interface BodyRef {
  seg: number;
  off: number;
  len: number;
}

/** An event as a state holds it: with its body inline, or a `bodyRef` to where the body is kept. */
export interface EventRecord extends StoredEvent {
  bodyRef?: BodyRef | undefined;
}

/** The whole state, as it is snapshotted. Maps are kept as plain objects for JSON. */
export interface StateData {
  events: Record<string, EventRecord>;
  deadLetters: DeadLetter[];
  runs: Record<string, Run>;
  resources: Record<string, ResourceRecord>;
  attempts: Record<string, CheckoutAttempt>;
  locks: Record<string, { owner: string; until: number }>;
  /** Timelines by subject, oldest first. Absent from snapshots written before issue 15. */
  activity: Record<string, Activity[]>;
}

/**
 * An event's dispatch run as the state keeps it from the event's insert until its first claim:
 * `true` when it was enqueued at the event's `receivedAt` (as the receiver does), else the enqueue
 * time in ms. Every other field of such a run is known (pending, no attempts, its data the event's
 * id and type), and every event received waits in one while a backlog drains: a `Run` object and
 * its data cost ~160 bytes more per event. Materialised (`StoreState.runOf`) wherever it is read.
 */
type FreshEventRun = true | number;

/** `StateData` as the state holds it: events as rows (`EventRow`), dispatch runs not yet claimed kept compact. */
export interface LiveStateData extends Omit<StateData, 'runs' | 'events'> {
  events: Record<string, EventRow>;
  runs: Record<string, Run | FreshEventRun>;
}

/** The keyed maps of `StateData` (everything but the dead letters, an append-only list). */
export type StateMap = Exclude<keyof StateData, 'deadLetters'>;
/** The keyed maps, derived from the type (a snapshot lists them in this order). */
export const STATE_MAPS = Object.keys({ events: true, runs: true, resources: true, attempts: true, locks: true, activity: true } satisfies Record<StateMap, true>) as StateMap[];
/** Marks a key that did not exist when a view was frozen. */
const ABSENT = Symbol('absent');

/** The state as it was at `StoreState.freeze()`, read while later ops go on. */
export interface FrozenState {
  /** The entries of one map, each as it was (keys added since are left out, deleted ones put back). */
  entries(map: StateMap): Iterable<[string, unknown]>;
  deadLetters(): DeadLetter[];
  /** Stop keeping pre-images. */
  release(): void;
}

/**
 * A map keyed by outside ids (order ids, event ids) must have no prototype: with a plain object,
 * an order called `constructor` or `__proto__` would find (or replace) Object.prototype's.
 */
function dictionary<T>(entries: Record<string, T> = {}): Record<string, T> {
  return Object.assign(Object.create(null) as Record<string, T>, entries);
}

export function emptyStateData(): StateData {
  return { events: dictionary(), deadLetters: [], runs: dictionary(), resources: dictionary(), attempts: dictionary(), locks: dictionary(), activity: dictionary() };
}

/** The same data with prototype-free maps (a snapshot parsed from JSON has plain objects). */
function withDictionaries(data: StateData): LiveStateData {
  const events = dictionary<EventRow>();
  for (const id of Object.keys(data.events)) events[id] = eventRow(data.events[id] as EventRecord);
  return {
    ...data,
    events,
    runs: dictionary(data.runs),
    resources: dictionary(data.resources),
    attempts: dictionary(data.attempts),
    locks: dictionary(data.locks),
    activity: dictionary(data.activity),
  };
}

const iso = (ms: number) => new Date(ms).toISOString();

/** Attempts stored before attempt numbers existed are the order's first. */
const attemptNumber = (attempt: CheckoutAttempt): number => attempt.number ?? 1;
const resourceKey = (kind: string, id: string) => `${kind}:${id}`;

/** Copies of the `limit` items that follow the first `offset` of `items` (paging). */
function pageOf<T extends object>(items: Iterable<T>, offset: number, limit: number): T[] {
  const out: T[] = [];
  let skip = offset;
  for (const item of items) {
    if (skip > 0) {
      skip -= 1;
      continue;
    }
    out.push({ ...item });
    if (out.length >= limit) break;
  }
  return out;
}

/** Make a dead letter op with its id fixed up front (ids must not depend on replay). */
export function deadLetterOp(letter: Omit<DeadLetter, 'id'>, at: number): Op {
  return { t: 'dead', at, letter: { ...letter, id: globalThis.crypto.randomUUID() } };
}

/** In-memory state plus the pure(ish) rules of every op. Shared by the memory and embedded stores. */
export class StoreState {
  readonly data: LiveStateData;
  /** The pre-images of a frozen view, while one is held. */
  private frozen: { before: Record<StateMap, Map<string, unknown>>; deadLetters: number } | undefined;
  /**
   * Keys of the runs still to do (`pending` or `running`). Dispatchers poll these; keeping them
   * apart means a poll costs what is outstanding, not what was ever received.
   */
  private readonly activeRuns = new Set<string>();
  /** Keys of the runs that failed for good: the summary counts them on every metrics scrape. */
  private readonly failedRuns = new Set<string>();
  /** Keys of open resources, which reconcile polls (same reason). */
  private readonly openResources = new Set<string>();
  /** Event ids by `receivedAt`, oldest first (ties in arrival order): lists read it from the end. */
  private eventOrder: string[];

  constructor(data: StateData = emptyStateData()) {
    this.data = withDictionaries(data);
    this.eventOrder = Object.values(this.data.events)
      .sort((a, b) => receivedMs(a) - receivedMs(b) || 0)
      .map((event) => event.id);
    for (const run of Object.values(data.runs)) {
      // A snapshot holds every run whole: keep the fresh ones compact again.
      const fresh = this.freshForm(run);
      if (fresh !== undefined) this.data.runs[run.key] = fresh;
      this.indexRun(run);
    }
    for (const [key, record] of Object.entries(data.resources)) if (record.open) this.openResources.add(key);
  }

  /**
   * The data as it is now, unaffected by later ops, for a snapshot written a slice at a time while
   * writes go on. Nothing is copied: every op replaces the records and timelines it changes instead
   * of changing them in place, and from now on the first change of each key keeps what it replaced
   * (a pre-image), so the view reads the live maps through those. One at a time; `release()` it.
   */
  freeze(): FrozenState {
    if (this.frozen) throw new Error('StoreState.freeze(): a frozen view is still held; release it first.');
    const before = Object.fromEntries(STATE_MAPS.map((map) => [map, new Map<string, unknown>()])) as Record<StateMap, Map<string, unknown>>;
    const frozen = { before, deadLetters: this.data.deadLetters.length };
    this.frozen = frozen;
    const { data } = this;
    /** An event as it was at the freeze (a compact run needs its event: see `FreshEventRun`). */
    const frozenEvent = (id: string): EventRow | undefined => {
      const before = frozen.before.events;
      const event = before.has(id) ? before.get(id) : data.events[id];
      return event === ABSENT ? undefined : (event as EventRow | undefined);
    };
    // Each entry as a snapshot holds it: events as records, runs whole.
    const whole = (map: StateMap, key: string, value: unknown): unknown =>
      map === 'events' ? recordOf(value as EventRow) : map === 'runs' && typeof value !== 'object' ? this.runOf(key, value as FreshEventRun, frozenEvent) : value;
    return {
      deadLetters: () => data.deadLetters.slice(0, frozen.deadLetters),
      *entries(map: StateMap): Generator<[string, unknown]> {
        const live = data[map] as Record<string, unknown>;
        const changed = frozen.before[map];
        for (const key of Object.keys(live)) {
          const value = changed.has(key) ? changed.get(key) : live[key];
          if (value !== ABSENT) yield [key, whole(map, key, value)];
        }
        // Keys deleted since the freeze.
        for (const [key, value] of changed) if (value !== ABSENT && live[key] === undefined) yield [key, whole(map, key, value)];
      },
      release: () => {
        if (this.frozen === frozen) this.frozen = undefined;
      },
    };
  }

  /** Set `key` of a map, keeping its pre-image while a frozen view is held (see `freeze`). */
  private put<M extends StateMap>(map: M, key: string, value: LiveStateData[M][string]): void {
    this.keepBefore(map, key);
    (this.data[map] as Record<string, unknown>)[key] = value;
  }

  private remove(map: StateMap, key: string): void {
    this.keepBefore(map, key);
    delete (this.data[map] as Record<string, unknown>)[key];
  }

  private keepBefore(map: StateMap, key: string): void {
    const before = this.frozen?.before[map];
    if (before && !before.has(key)) before.set(key, (this.data[map] as Record<string, unknown>)[key] ?? ABSENT);
  }

  /** Store a new version of a run (never change one in place: see `view`). */
  private putRun(run: Run): Run {
    this.put('runs', run.key, run);
    this.indexRun(run);
    return run;
  }

  private indexRun(run: Run): void {
    if (run.status === 'pending' || run.status === 'running') this.activeRuns.add(run.key);
    else this.activeRuns.delete(run.key);
    if (run.status === 'failed') this.failedRuns.add(run.key);
    else this.failedRuns.delete(run.key);
  }

  /**
   * The run stored under `key`, whole (a compact one materialised: see `FreshEventRun`). Not a
   * copy: callers that hand it out copy it. `eventOf` reads the events (a frozen view passes its own).
   */
  runOf(key: string, value = this.data.runs[key], eventOf = (id: string) => this.data.events[id]): Run | undefined {
    if (typeof value === 'object' || value === undefined) return value;
    const event = eventOf(eventIdOf(key) ?? '');
    if (!event) throw new Error(`StoreState: the dispatch run ${key} has no event (a state built from ops out of order?)`);
    const time = this.freshTime(event, value);
    return {
      key,
      kind: 'event',
      status: 'pending',
      attempts: 0,
      owner: undefined,
      leaseUntil: undefined,
      nextAttemptAt: time,
      lastError: undefined,
      data: { eventId: event.id, type: event.type },
      createdAt: time,
      updatedAt: time,
      completedAt: undefined,
    };
  }

  private freshTime(event: EventRow, value: FreshEventRun): string {
    return value === true ? receivedAtOf(event) : iso(value);
  }

  /** The compact form of `run` when it is an event's unclaimed dispatch run that loses nothing by it. */
  private freshForm(run: Run): FreshEventRun | undefined {
    if (run.kind !== 'event' || run.status !== 'pending' || run.attempts !== 0) return undefined;
    if (run.owner !== undefined || run.leaseUntil !== undefined || run.lastError !== undefined || run.completedAt !== undefined) return undefined;
    if (run.createdAt !== run.updatedAt || run.createdAt !== run.nextAttemptAt) return undefined;
    const eventId = eventIdOf(run.key);
    const event = eventId === undefined ? undefined : this.data.events[eventId];
    if (typeof run.data !== 'object' || run.data === null) return undefined;
    const keys = Object.keys(run.data);
    if (!event || keys.length !== 2 || run.data.eventId !== event.id || run.data.type !== event.type || keys[0] !== 'eventId') return undefined;
    const at = Date.parse(run.createdAt);
    if (iso(at) !== run.createdAt) return undefined;
    return run.createdAt === receivedAtOf(event) ? true : at;
  }

  apply(op: Op): OpResult {
    switch (op.t) {
      case 'event':
        return this.insertEvent(op);
      case 'dead':
        this.data.deadLetters.push({ ...op.letter });
        return { changed: true, value: { ...op.letter } };
      case 'enqueue':
        return this.enqueue(op.run, op.at);
      case 'claim':
        return this.claim(op);
      case 'complete':
        return this.complete(op);
      case 'renew':
        return this.renew(op);
      case 'fail':
        return this.fail(op);
      case 'retry':
        return this.retry(op);
      case 'resource':
        return this.updateResource(op.update, op.at);
      case 'attempt':
        return this.putAttempt(op);
      case 'attemptDone':
        return this.completeAttempt(op);
      case 'attemptRefused':
        return this.refuseAttempt(op);
      case 'lock':
        return this.lock(op);
      case 'unlock':
        return this.unlock(op);
      case 'prune':
        return this.prune(op);
      case 'activity':
        return this.appendActivity(op);
    }
  }

  private insertEvent(op: Extract<Op, { t: 'event' }>): OpResult<{ inserted: boolean }> {
    if (this.data.events[op.event.id]) return { changed: false, value: { inserted: false } };
    const event = eventRow(op.event);
    this.put('events', event.id, event);
    this.placeInOrder(event);
    // Its dispatch run, compact until claimed (see `FreshEventRun`), unless one was enqueued apart.
    const key = runKeys.event(event.id);
    if (this.data.runs[key] === undefined) {
      this.put('runs', key, typeof event.receivedAt === 'number' && receivedMs(event) === op.at ? true : op.at);
      this.activeRuns.add(key);
    }
    return { changed: true, value: { inserted: true } };
  }

  /** Events arrive nearly in `receivedAt` order: append, or binary-search the place of a late one. */
  private placeInOrder(event: EventRow): void {
    const order = this.eventOrder;
    const at = receivedMs(event);
    const receivedAt = (i: number) => receivedMs(this.data.events[order[i] as string] as EventRow);
    let low = order.length;
    if (low > 0 && receivedAt(low - 1) > at) {
      low = 0;
      for (let high = order.length - 1; low < high; ) {
        const mid = (low + high) >>> 1;
        if (receivedAt(mid) > at) high = mid;
        else low = mid + 1;
      }
    }
    order.splice(low, 0, event.id);
  }

  private enqueue(run: NewRun, at: number): OpResult<{ inserted: boolean; run: Run }> {
    const existing = this.runOf(run.key);
    if (existing) return { changed: false, value: { inserted: false, run: { ...existing } } };
    const now = iso(at);
    const created: Run = {
      key: run.key,
      kind: run.kind,
      status: 'pending',
      attempts: 0,
      owner: undefined,
      leaseUntil: undefined,
      nextAttemptAt: run.nextAttemptAt ?? now,
      lastError: undefined,
      data: run.data,
      createdAt: now,
      updatedAt: now,
      completedAt: undefined,
    };
    this.put('runs', run.key, created);
    this.indexRun(created);
    return { changed: true, value: { inserted: true, run: { ...created } } };
  }

  /** Whether `run` may be claimed at time `at`. */
  static claimable(run: Run, at: number): boolean {
    if (run.status === 'pending') return Date.parse(run.nextAttemptAt) <= at;
    if (run.status === 'running') return run.leaseUntil === undefined || Date.parse(run.leaseUntil) <= at;
    return false;
  }

  private claim(op: Extract<Op, { t: 'claim' }>): OpResult<Run | undefined> {
    const run = this.runOf(op.key);
    if (!run || !StoreState.claimable(run, op.at)) return { changed: false, value: undefined };
    const claimed = this.putRun({ ...run, status: 'running', owner: op.owner, leaseUntil: iso(op.at + op.leaseMs), attempts: run.attempts + 1, updatedAt: iso(op.at) });
    return { changed: true, value: { ...claimed } };
  }

  private holds(run: Run | undefined, owner: string): run is Run {
    return run !== undefined && run.status === 'running' && run.owner === owner;
  }

  private renew(op: Extract<Op, { t: 'renew' }>): OpResult<boolean> {
    const run = this.runOf(op.key);
    if (!this.holds(run, op.owner)) return { changed: false, value: false };
    this.putRun({ ...run, leaseUntil: iso(op.at + op.leaseMs), updatedAt: iso(op.at) });
    return { changed: true, value: true };
  }

  private complete(op: Extract<Op, { t: 'complete' }>): OpResult<boolean> {
    const run = this.runOf(op.key);
    if (!this.holds(run, op.owner)) return { changed: false, value: false };
    this.putRun({ ...run, status: 'done', leaseUntil: undefined, lastError: undefined, completedAt: iso(op.at), updatedAt: iso(op.at) });
    return { changed: true, value: true };
  }

  private fail(op: Extract<Op, { t: 'fail' }>): OpResult<boolean> {
    const run = this.runOf(op.key);
    if (!this.holds(run, op.owner)) return { changed: false, value: false };
    this.putRun({
      ...run,
      status: op.retryAt ? 'pending' : 'failed',
      nextAttemptAt: op.retryAt ?? run.nextAttemptAt,
      leaseUntil: undefined,
      owner: undefined,
      lastError: op.error,
      updatedAt: iso(op.at),
    });
    return { changed: true, value: true };
  }

  private retry(op: Extract<Op, { t: 'retry' }>): OpResult<boolean> {
    const run = this.runOf(op.key);
    if (!run || run.status !== 'failed') return { changed: false, value: false };
    this.putRun({ ...run, status: 'pending', attempts: 0, nextAttemptAt: iso(op.at), updatedAt: iso(op.at) });
    return { changed: true, value: true };
  }

  private updateResource(update: ResourceUpdate, at: number): OpResult<{ record: ResourceRecord; advanced: boolean }> {
    const key = resourceKey(update.kind, update.id);
    const now = iso(at);
    const existing = this.data.resources[key];
    // A copy: a record is replaced, never changed in place (see `view`).
    const record: ResourceRecord = existing ? { ...existing } : {
      kind: update.kind,
      id: update.id,
      environment: undefined,
      orderId: undefined,
      outcome: 'pending',
      outcomeSource: undefined,
      late: undefined,
      snapshot: undefined,
      expiresAt: undefined,
      lastNewsAt: now,
      open: true,
      createdAt: now,
      updatedAt: now,
    };
    const advanced = update.outcome !== undefined && OUTCOME_RANK[update.outcome] > OUTCOME_RANK[record.outcome];
    if (advanced && update.outcome) {
      record.outcome = update.outcome;
      record.outcomeSource = update.source;
      // Lateness is a fact of the news that first paid the resource: later news never rewrites it.
      if (OUTCOME_RANK[update.outcome] === OUTCOME_RANK.paid) record.late = update.late ?? false;
    }
    // A snapshot older than the outcome we hold must not replace a newer one: only take it when the
    // proposed outcome is not behind.
    const notBehind = update.outcome === undefined || OUTCOME_RANK[update.outcome] >= OUTCOME_RANK[record.outcome];
    if (update.snapshot && notBehind) record.snapshot = update.snapshot;
    if (update.expiresAt && notBehind) record.expiresAt = update.expiresAt;
    record.environment = update.environment ?? record.environment;
    record.orderId = update.orderId ?? record.orderId;
    if (update.open !== undefined) record.open = update.open;
    record.lastNewsAt = now;
    record.updatedAt = now;
    this.put('resources', key, record);
    if (record.open) this.openResources.add(key);
    else this.openResources.delete(key);
    return { changed: true, value: { record: { ...record }, advanced } };
  }

  private putAttempt(op: Extract<Op, { t: 'attempt' }>): OpResult<{ inserted: boolean; attempt: CheckoutAttempt }> {
    const existing = this.data.attempts[op.attempt.orderId];
    const number = op.attempt.number ?? 1;
    // Only a refused attempt gives way, and only to the next number (a stale caller gets the current one).
    const replaces = existing !== undefined && existing.status === 'refused' && number === attemptNumber(existing) + 1;
    if (existing && !replaces) return { changed: false, value: { inserted: false, attempt: { ...existing, number: attemptNumber(existing) } } };
    const attempt: CheckoutAttempt = {
      ...op.attempt,
      number,
      status: 'sending',
      resourceId: undefined,
      checkoutUrl: undefined,
      createdAt: iso(op.at),
      updatedAt: iso(op.at),
    };
    this.put('attempts', attempt.orderId, attempt);
    return { changed: true, value: { inserted: true, attempt: { ...attempt } } };
  }

  private completeAttempt(op: Extract<Op, { t: 'attemptDone' }>): OpResult<CheckoutAttempt | undefined> {
    const attempt = this.data.attempts[op.orderId];
    if (!attempt) return { changed: false, value: undefined };
    this.put('attempts', op.orderId, { ...attempt, status: 'created', resourceId: op.resourceId, checkoutUrl: op.checkoutUrl, updatedAt: iso(op.at) });
    return { changed: true, value: this.getAttempt(op.orderId) };
  }

  private refuseAttempt(op: Extract<Op, { t: 'attemptRefused' }>): OpResult<boolean> {
    const attempt = this.data.attempts[op.orderId];
    if (!attempt || attempt.status !== 'sending' || attemptNumber(attempt) !== op.number) return { changed: false, value: false };
    this.put('attempts', op.orderId, { ...attempt, status: 'refused', updatedAt: iso(op.at) });
    return { changed: true, value: true };
  }

  private lock(op: Extract<Op, { t: 'lock' }>): OpResult<boolean> {
    const held = this.data.locks[op.name];
    if (held && held.owner !== op.owner && held.until > op.at) return { changed: false, value: false };
    this.put('locks', op.name, { owner: op.owner, until: op.at + op.ttlMs });
    return { changed: true, value: true };
  }

  private unlock(op: Extract<Op, { t: 'unlock' }>): OpResult<void> {
    const held = this.data.locks[op.name];
    if (!held || held.owner !== op.owner) return { changed: false, value: undefined };
    this.remove('locks', op.name);
    return { changed: true, value: undefined };
  }

  private prune(op: Extract<Op, { t: 'prune' }>): OpResult<{ payloadsPruned: number; eventsForgotten: number }> {
    let payloadsPruned = 0;
    let eventsForgotten = 0;
    const eventsBefore = op.eventsBefore === undefined ? undefined : Date.parse(op.eventsBefore);
    const payloadsBefore = op.payloadsBefore === undefined ? undefined : Date.parse(op.payloadsBefore);
    for (const [id, event] of Object.entries(this.data.events)) {
      const key = runKeys.event(id);
      const run = this.data.runs[key];
      // Never forget an event whose dispatch is unfinished (a compact run is pending).
      if (run !== undefined && (typeof run !== 'object' || (run.status !== 'done' && run.status !== 'failed'))) continue;
      if (eventsBefore !== undefined && receivedMs(event) < eventsBefore) {
        this.remove('events', id);
        this.remove('runs', key);
        this.activeRuns.delete(key);
        this.failedRuns.delete(key);
        eventsForgotten += 1;
      } else if (payloadsBefore !== undefined && receivedMs(event) < payloadsBefore && (event.body !== undefined || event.seg >= 0)) {
        this.put('events', id, withoutBody(event));
        payloadsPruned += 1;
      }
    }
    if (eventsForgotten > 0) this.eventOrder = this.eventOrder.filter((id) => this.data.events[id] !== undefined);
    const activityForgotten = op.eventsBefore ? this.forgetActivity(op.eventsBefore) : 0;
    return { changed: payloadsPruned + eventsForgotten + activityForgotten > 0, value: { payloadsPruned, eventsForgotten } };
  }

  /** Drop timeline entries older than `before` (timelines are oldest first); returns how many. */
  private forgetActivity(before: string): number {
    let forgotten = 0;
    for (const [subject, entries] of Object.entries(this.data.activity)) {
      const keep = entries.findIndex((entry) => entry.at >= before);
      const drop = keep === -1 ? entries.length : keep;
      if (drop === 0) continue;
      forgotten += drop;
      if (drop === entries.length) this.remove('activity', subject);
      else this.put('activity', subject, entries.slice(drop));
    }
    return forgotten;
  }

  private appendActivity(op: Extract<Op, { t: 'activity' }>): OpResult<void> {
    const entry: Activity = { subject: op.entry.subject, kind: op.entry.kind, at: iso(op.at), data: op.entry.data };
    const entries = [...(this.data.activity[op.entry.subject] ?? []), entry];
    this.put('activity', op.entry.subject, entries.length > ACTIVITY_KEPT_PER_SUBJECT ? entries.slice(entries.length - ACTIVITY_KEPT_PER_SUBJECT) : entries);
    return { changed: true, value: undefined };
  }

  // Queries (no ops).

  getEvent(id: string): EventRecord | undefined {
    const event = this.data.events[id];
    return event ? recordOf(event) : undefined;
  }

  listEvents(filter: EventFilter = {}): Array<EventRecord & { run: Run | undefined }> {
    const limit = filter.limit ?? 100;
    let skip = filter.offset ?? 0;
    const out: Array<EventRecord & { run: Run | undefined }> = [];
    const since = filter.since ? Date.parse(filter.since) : undefined;
    for (const event of this.eventsNewestFirst(filter.status)) {
      if (since !== undefined && receivedMs(event) < since) break;
      if (filter.type && event.type !== filter.type) continue;
      if (filter.resourceId && event.resourceId !== filter.resourceId) continue;
      const run = this.runOf(runKeys.event(event.id));
      if (filter.status && run?.status !== filter.status) continue;
      if (skip > 0) {
        skip -= 1;
        continue;
      }
      out.push({ ...recordOf(event), run: run ? { ...run } : undefined });
      if (out.length >= limit) break;
    }
    return out;
  }

  /** Newest first, without sorting history: from the receive-order index, or the few events still dispatching. */
  private *eventsNewestFirst(status: EventFilter['status']): Generator<EventRow> {
    if (status === 'pending' || status === 'running') {
      const events = [...this.activeRuns].flatMap((key) => {
        const eventId = eventIdOf(key);
        const event = eventId === undefined ? undefined : this.data.events[eventId];
        return event ? [event] : [];
      });
      yield* events.sort((a, b) => receivedMs(b) - receivedMs(a) || 0);
      return;
    }
    for (let i = this.eventOrder.length - 1; i >= 0; i--) {
      const event = this.data.events[this.eventOrder[i] as string];
      if (event) yield event;
    }
  }

  getRun(key: string): Run | undefined {
    const run = this.runOf(key);
    return run ? { ...run } : undefined;
  }

  listRuns(filter: RunFilter = {}): Run[] {
    return pageOf(this.wholeRuns(this.matchingRuns(filter, filter.newestFirst ?? false)), filter.offset ?? 0, filter.limit ?? 100);
  }

  /** The runs of `keys`, whole, as they are read (lazily: a page stops at its limit). */
  private *wholeRuns(keys: Iterable<string>): Generator<Run> {
    for (const key of keys) yield this.runOf(key) as Run;
  }

  countRuns(filter: RunCountFilter = {}): number {
    let count = 0;
    for (const _key of this.matchingRuns(filter, false)) count += 1;
    return count;
  }

  /** The keys of the runs `filter` matches, in creation order (or newest first); compact runs stay compact. */
  private *matchingRuns(filter: RunCountFilter, newestFirst: boolean): Generator<string> {
    const statuses = filter.status === undefined ? undefined : Array.isArray(filter.status) ? filter.status : [filter.status];
    const dueBy = filter.dueBy === undefined ? undefined : Date.parse(filter.dueBy);
    // Only pending and running runs can be due: then the active index is enough.
    const activeOnly = dueBy !== undefined || (statuses !== undefined && statuses.every((s) => s === 'pending' || s === 'running'));
    const keys = activeOnly ? this.activeRuns : Object.keys(this.data.runs);
    for (const key of newestFirst ? [...keys].reverse() : keys) {
      const run = this.data.runs[key];
      if (run === undefined) continue;
      if (typeof run !== 'object') {
        if (filter.kind && filter.kind !== 'event') continue;
        if (statuses && !statuses.includes('pending')) continue;
        if (dueBy !== undefined && !(this.freshAt(key, run) <= dueBy)) continue;
        yield key;
        continue;
      }
      if (filter.kind && run.kind !== filter.kind) continue;
      if (statuses && !statuses.includes(run.status)) continue;
      if (dueBy !== undefined && !StoreState.claimable(run, dueBy)) continue;
      yield key;
    }
  }

  /** When a compact run is due (its enqueue time), in ms. */
  private freshAt(key: string, value: FreshEventRun): number {
    if (value !== true) return value;
    const event = this.data.events[eventIdOf(key) ?? ''];
    return event ? receivedMs(event) : Number.NEGATIVE_INFINITY;
  }

  /** The data as a snapshot holds it: events as records, every run whole. A copy of the maps; the other records are shared. */
  snapshotData(): StateData {
    const events = dictionary<EventRecord>();
    for (const [id, row] of Object.entries(this.data.events)) events[id] = recordOf(row);
    const runs = dictionary<Run>();
    for (const key of Object.keys(this.data.runs)) runs[key] = this.runOf(key) as Run;
    return { ...this.data, events, runs };
  }

  getAttempt(orderId: string): CheckoutAttempt | undefined {
    const attempt = this.data.attempts[orderId];
    return attempt ? { ...attempt, number: attemptNumber(attempt) } : undefined;
  }

  getResource(kind: string, id: string): ResourceRecord | undefined {
    const record = this.data.resources[resourceKey(kind, id)];
    return record ? { ...record } : undefined;
  }

  listResources(filter: ResourceFilter = {}): ResourceRecord[] {
    return pageOf(this.matchingResources(filter), filter.offset ?? 0, filter.limit ?? 1000);
  }

  private *matchingResources(filter: ResourceFilter): Generator<ResourceRecord> {
    const keys = filter.open === true ? this.openResources : Object.keys(this.data.resources);
    for (const key of filter.newestFirst ? [...keys].reverse() : keys) {
      const record = this.data.resources[key];
      if (!record) continue;
      if (filter.kind && record.kind !== filter.kind) continue;
      if (filter.open !== undefined && record.open !== filter.open) continue;
      if (filter.lastNewsBefore && record.lastNewsAt > filter.lastNewsBefore) continue;
      if (filter.outcomeSource && record.outcomeSource !== filter.outcomeSource) continue;
      yield record;
    }
  }

  listDeadLetters(limit = 100, offset = 0): DeadLetter[] {
    const end = Math.max(0, this.data.deadLetters.length - offset);
    return this.data.deadLetters.slice(Math.max(0, end - limit), end).reverse();
  }

  listActivity(filter: ActivityFilter): Activity[] {
    const entries = this.data.activity[filter.subject] ?? [];
    const end = Math.max(0, entries.length - (filter.offset ?? 0));
    return entries
      .slice(Math.max(0, end - (filter.limit ?? 100)), end)
      .reverse()
      .map((entry) => ({ ...entry }));
  }

  /**
   * The overview's counts at `now`: events of the last day from the newest end of the receive-order
   * index, the backlog from the active runs; runs and resources are counted in one pass each.
   */
  summarize(now: number): StoreSummary {
    const hourAgo = now - 3_600_000;
    const dayAgo = now - 86_400_000;
    const byType = new Map<string, { type: string; lastHour: number; lastDay: number }>();
    for (let i = this.eventOrder.length - 1; i >= 0; i--) {
      const event = this.data.events[this.eventOrder[i] as string];
      if (!event) continue;
      const receivedAt = receivedMs(event);
      if (receivedAt < dayAgo) break;
      const counts = byType.get(event.type) ?? { type: event.type, lastHour: 0, lastDay: 0 };
      counts.lastDay += 1;
      if (receivedAt >= hourAgo) counts.lastHour += 1;
      byType.set(event.type, counts);
    }
    const dispatch: StoreSummary['dispatch'] = { pending: 0, running: 0, failed: 0, oldestQueuedAt: undefined };
    const fulfillment: StoreSummary['fulfillment'] = { pending: 0, running: 0, failed: 0 };
    // From the indexes: what is still to do, and what failed for good (never every run ever stored).
    for (const key of this.failedRuns) {
      const run = this.data.runs[key];
      if (typeof run === 'object') (run.kind === 'event' ? dispatch : fulfillment).failed += 1;
    }
    // The oldest compact run by its time in ms, written out once at the end (not once per waiting event).
    let oldestFresh: { key: string; value: FreshEventRun; at: number } | undefined;
    for (const key of this.activeRuns) {
      const value = this.data.runs[key];
      if (value === undefined) continue;
      if (typeof value !== 'object') {
        dispatch.pending += 1;
        const at = this.freshAt(key, value);
        if (oldestFresh === undefined || at < oldestFresh.at) oldestFresh = { key, value, at };
        continue;
      }
      const run = value;
      if (run.status === 'done' || run.status === 'failed') continue;
      const counts = run.kind === 'event' ? dispatch : fulfillment;
      counts[run.status] += 1;
      // Waiting since it was last due, not since it was made: a run retried by command (or after a
      // backoff) is a fresh wait, and an old event retried must not read as an old backlog.
      if (run.kind === 'event' && (dispatch.oldestQueuedAt === undefined || run.nextAttemptAt < dispatch.oldestQueuedAt)) {
        dispatch.oldestQueuedAt = run.nextAttemptAt;
      }
    }
    if (oldestFresh) {
      const createdAt = this.freshTime(this.data.events[eventIdOf(oldestFresh.key) ?? ''] as EventRow, oldestFresh.value);
      if (dispatch.oldestQueuedAt === undefined || createdAt < dispatch.oldestQueuedAt) dispatch.oldestQueuedAt = createdAt;
    }
    // A retry due later is not waiting yet.
    if (dispatch.oldestQueuedAt !== undefined && Date.parse(dispatch.oldestQueuedAt) > now) dispatch.oldestQueuedAt = iso(now);
    const open: Record<ResourceKind, number> = { payment: 0, invoice: 0 };
    const learnedByReconcile: Record<ResourceKind, number> = { payment: 0, invoice: 0 };
    for (const record of Object.values(this.data.resources)) {
      if (record.open) open[record.kind] += 1;
      if (record.outcomeSource === 'reconcile') learnedByReconcile[record.kind] += 1;
    }
    return {
      eventsByType: [...byType.values()].sort((a, b) => (a.type < b.type ? -1 : a.type > b.type ? 1 : 0)),
      dispatch,
      fulfillment,
      open,
      learnedByReconcile,
      deadLetters: this.data.deadLetters.length,
    };
  }
}

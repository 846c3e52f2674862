import { eventIdOf, runKeys } from '../runs/keys.js';
import { EventTable } from './event-table.js';
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
 * `StateData` as the state holds it: every event, and the dispatch run made with it, in one table
 * (`EventTable`); the other runs (handler runs, and a dispatch run enqueued before its event, as
 * earlier versions did) by key.
 */
export interface LiveStateData extends Omit<StateData, 'runs' | 'events'> {
  events: EventTable;
  runs: Record<string, Run>;
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

/** A run as the state's run listing walks them: a slot of the event table, or the key of another run. */
type RunRef = number | string;

/** In-memory state plus the pure(ish) rules of every op. Shared by the memory and embedded stores. */
export class StoreState {
  readonly data: LiveStateData;
  /** The pre-images of a frozen view, while one is held. */
  private frozen: Frozen | undefined;
  /**
   * Keys of the other runs (not the event table's) still to do (`pending` or `running`): dispatchers
   * and the engine poll these; keeping them apart means a poll costs what is outstanding, not what
   * was ever received. The table keeps its own (`EventTable.active`).
   */
  private readonly activeRuns = new Set<string>();
  /** Keys of the other runs that failed for good: the summary counts them on every metrics scrape. */
  private readonly failedRuns = new Set<string>();
  /** When each of the other runs was made, in one sequence with the table's runs: listings merge the two in that order. */
  private readonly runSeqs = new Map<string, number>();
  private nextSeq = 0;
  /** Keys of open resources, which reconcile polls (same reason). */
  private readonly openResources = new Set<string>();

  constructor(data: StateData = emptyStateData()) {
    const events = new EventTable();
    this.data = {
      ...data,
      events,
      runs: dictionary(),
      resources: dictionary(data.resources),
      attempts: dictionary(data.attempts),
      locks: dictionary(data.locks),
      activity: dictionary(data.activity),
    };
    // Runs in their order, which is the order they were made in: an event's dispatch run takes its
    // event into the table with it, so that slot order is run order. Ties in `receivedAt` keep the
    // snapshot's order of events (`rank`, by slot).
    const ids = Object.keys(data.events);
    const position = new Map(ids.map((id, i) => [id, i]));
    const rank: number[] = [];
    for (const [key, found] of Object.entries(data.runs)) {
      const seq = this.nextSeq++;
      // Everything finds a run by the key it is stored under (a damaged snapshot could say otherwise).
      const run = found.key === key ? found : { ...found, key };
      const eventId = run.kind === 'event' ? eventIdOf(key) : undefined;
      const event = eventId === undefined || !Object.hasOwn(data.events, eventId) ? undefined : data.events[eventId];
      if (event) {
        // Keyed by the map's key, as a snapshot lists it.
        const slot = events.insert(event.id === eventId ? event : { ...event, id: eventId as string });
        rank[slot] = position.get(eventId as string) as number;
        // A snapshot holds every run whole: keep the fresh ones compact again.
        const fresh = this.freshForm(run, slot);
        if (fresh === undefined) events.setWholeRun(slot, run, seq);
        else events.setFresh(slot, seq, fresh === 'receipt' ? undefined : fresh);
        continue;
      }
      this.data.runs[key] = run;
      this.runSeqs.set(key, seq);
      this.indexRun(run);
    }
    ids.forEach((id, i) => {
      const event = data.events[id] as EventRecord;
      if (events.slotOf(id) === undefined) rank[events.insert(event.id === id ? event : { ...event, id })] = i;
    });
    events.sortReceiveOrder((slot) => rank[slot] as number);
    for (const [key, record] of Object.entries(data.resources)) if (record.open) this.openResources.add(key);
  }

  private get events(): EventTable {
    return this.data.events;
  }

  /**
   * The data as it is now, unaffected by later ops, for a snapshot written a slice at a time while
   * writes go on. Nothing is copied: every op replaces the records and timelines it changes instead
   * of changing them in place, and from now on the first change of each key (or event slot) keeps
   * what it replaced (a pre-image), so the view reads the live state through those. One at a time;
   * `release()` it.
   */
  freeze(): FrozenState {
    if (this.frozen) throw new Error('StoreState.freeze(): a frozen view is still held; release it first.');
    const before = Object.fromEntries(STATE_MAPS.map((map) => [map, new Map<string, unknown>()])) as Record<StateMap, Map<string, unknown>>;
    const frozen: Frozen = { before, slots: new Map(), slotCount: this.events.slotCount, deadLetters: this.data.deadLetters.length };
    this.frozen = frozen;
    const { data, events } = this;
    /** The entries of a keyed map as they were (keys added since left out, deleted ones put back at the end). */
    function* keyed(map: StateMap): Generator<[string, unknown]> {
      const live = data[map] as Record<string, unknown>;
      const changed = frozen.before[map];
      for (const key of Object.keys(live)) {
        const value = changed.has(key) ? changed.get(key) : live[key];
        if (value !== ABSENT) yield [key, value];
      }
      for (const [key, value] of changed) if (value !== ABSENT && live[key] === undefined) yield [key, value];
    }
    const runSeqs = this.runSeqs;
    const tableRun = (slot: number) => this.tableRun(slot);
    return {
      deadLetters: () => data.deadLetters.slice(0, frozen.deadLetters),
      *entries(map: StateMap): Generator<[string, unknown]> {
        // A table slot changed since the freeze reads through its pre-image (`keepSlot`).
        if (map === 'events') {
          for (let slot = 0; slot < frozen.slotCount; slot++) {
            const image = frozen.slots.get(slot);
            const record = image && 'record' in image ? image.record : events.has(slot) ? events.record(slot) : undefined;
            if (record) yield [record.id, record];
          }
          return;
        }
        if (map !== 'runs') return yield* keyed(map);
        // The table's runs and the others, in the order they were made.
        function* tableRuns(): Generator<[string, Run, number]> {
          for (let slot = 0; slot < frozen.slotCount; slot++) {
            const image = frozen.slots.get(slot);
            if (image) {
              if (image.run) yield [image.run.key, image.run, image.seq];
            } else if (events.has(slot) && events.hasRun(slot)) {
              const run = tableRun(slot) as Run;
              yield [run.key, run, events.runSeq(slot)];
            }
          }
        }
        function* otherRuns(): Generator<[string, Run, number]> {
          for (const [key, run] of keyed('runs')) yield [key, run as Run, runSeqs.get(key) ?? Number.POSITIVE_INFINITY];
        }
        for (const [key, run] of merged(tableRuns(), otherRuns(), ([, , seq]) => seq, false)) yield [key, run];
      },
      release: () => {
        if (this.frozen === frozen) this.frozen = undefined;
      },
    };
  }

  /** Set `key` of a map, keeping its pre-image while a frozen view is held (see `freeze`). */
  private put<M extends Exclude<StateMap, 'events'>>(map: M, key: string, value: LiveStateData[M][string]): void {
    this.keepBefore(map, key);
    (this.data[map] as Record<string, unknown>)[key] = value;
  }

  private remove(map: Exclude<StateMap, 'events'>, key: string): void {
    this.keepBefore(map, key);
    delete (this.data[map] as Record<string, unknown>)[key];
  }

  private keepBefore(map: StateMap, key: string): void {
    const before = this.frozen?.before[map];
    if (before && !before.has(key)) before.set(key, (this.data[map] as Record<string, unknown>)[key] ?? ABSENT);
  }

  /**
   * Before a table slot changes (its run, or its event too: `withEvent`), keep what it was while a
   * frozen view is held. The event is kept only when it changes: a claim during a snapshot then
   * costs its run's pre-image, not a copy of its event.
   */
  private keepSlot(slot: number, withEvent: boolean): void {
    const frozen = this.frozen;
    if (!frozen || slot >= frozen.slotCount) return;
    let image = frozen.slots.get(slot);
    if (!image) {
      const live = this.events.has(slot);
      image = { run: live ? this.tableRun(slot) : undefined, seq: live ? this.events.runSeq(slot) : -1 };
      frozen.slots.set(slot, image);
    }
    // The event has not changed since the freeze while its pre-image is not kept yet.
    if (withEvent && !('record' in image)) image.record = this.events.has(slot) ? this.events.record(slot) : undefined;
  }

  /** Store a new version of a run (never change one in place: see `freeze`). */
  private putRun(run: Run): Run {
    const slot = this.tableSlot(run.key);
    if (slot !== undefined) {
      this.keepSlot(slot, false);
      this.events.setWholeRun(slot, run);
      return run;
    }
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

  /** The table slot that holds the run keyed `key`, if the table holds it. */
  private tableSlot(key: string): number | undefined {
    const eventId = eventIdOf(key);
    const slot = eventId === undefined ? undefined : this.events.slotOf(eventId);
    return slot !== undefined && this.events.hasRun(slot) ? slot : undefined;
  }

  /** The run stored under `key`, whole (a fresh one materialised). Not a copy: callers that hand it out copy it. */
  private runOf(key: string): Run | undefined {
    const other = this.data.runs[key];
    if (other !== undefined) return other;
    const slot = this.tableSlot(key);
    return slot === undefined ? undefined : this.tableRun(slot);
  }

  /** The run of a table slot, whole: a fresh run's every field follows from its event and when it was enqueued. */
  private tableRun(slot: number): Run | undefined {
    const whole = this.events.wholeRun(slot);
    if (whole) return whole;
    const since = this.events.freshSince(slot);
    if (since === undefined) return undefined;
    const time = this.events.freshAtReceipt(slot) ? this.events.receivedAt(slot) : iso(since);
    const eventId = this.events.id(slot);
    return {
      key: runKeys.event(eventId),
      kind: 'event',
      status: 'pending',
      attempts: 0,
      owner: undefined,
      leaseUntil: undefined,
      nextAttemptAt: time,
      lastError: undefined,
      data: { eventId, type: this.events.type(slot) },
      createdAt: time,
      updatedAt: time,
      completedAt: undefined,
    };
  }

  /**
   * How a snapshot's run of the event in `slot` is kept fresh again: `'receipt'` when it was enqueued
   * at the event's `receivedAt` as written, else the enqueue time in ms; undefined when it is not an
   * untouched dispatch run (it is kept whole).
   */
  private freshForm(run: Run, slot: number): 'receipt' | number | undefined {
    if (run.kind !== 'event' || run.status !== 'pending' || run.attempts !== 0) return undefined;
    if (run.owner !== undefined || run.leaseUntil !== undefined || run.lastError !== undefined || run.completedAt !== undefined) return undefined;
    if (run.createdAt !== run.updatedAt || run.createdAt !== run.nextAttemptAt) return undefined;
    if (typeof run.data !== 'object' || run.data === null) return undefined;
    const keys = Object.keys(run.data);
    if (keys.length !== 2 || run.data.eventId !== this.events.id(slot) || run.data.type !== this.events.type(slot) || keys[0] !== 'eventId') return undefined;
    const at = Date.parse(run.createdAt);
    if (iso(at) !== run.createdAt) return undefined;
    return run.createdAt === this.events.receivedAt(slot) ? 'receipt' : at;
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
    if (this.events.slotOf(op.event.id) !== undefined) return { changed: false, value: { inserted: false } };
    const slot = this.events.insert(op.event);
    // Its dispatch run, fresh until claimed, unless one was enqueued apart (journals of earlier versions).
    if (this.data.runs[runKeys.event(op.event.id)] === undefined) this.events.setFresh(slot, this.nextSeq++, this.events.receivedExactlyAt(slot, op.at) ? undefined : op.at);
    return { changed: true, value: { inserted: true } };
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
    this.runSeqs.set(run.key, this.nextSeq++);
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
    const { events } = this;
    for (const slot of events.inSlotOrder()) {
      // A dispatch run is in the table, or one of the other runs (enqueued apart by earlier versions).
      const key = events.hasRun(slot) ? undefined : runKeys.event(events.id(slot));
      const status = key === undefined ? events.runStatus(slot) : this.data.runs[key]?.status;
      // Never forget an event whose dispatch is unfinished.
      if (status !== undefined && status !== 'done' && status !== 'failed') continue;
      const receivedAt = events.receivedMs(slot);
      if (eventsBefore !== undefined && receivedAt < eventsBefore) {
        this.keepSlot(slot, true);
        events.forget(slot);
        if (key !== undefined && this.data.runs[key] !== undefined) {
          this.remove('runs', key);
          this.runSeqs.delete(key);
          this.activeRuns.delete(key);
          this.failedRuns.delete(key);
        }
        eventsForgotten += 1;
      } else if (payloadsBefore !== undefined && receivedAt < payloadsBefore && events.hasBody(slot)) {
        this.keepSlot(slot, true);
        events.dropBody(slot);
        payloadsPruned += 1;
      }
    }
    // Renumber once holes outweigh the events (never under a frozen view, which reads by slot).
    if (eventsForgotten > 0 && !this.frozen && events.holes > Math.max(1024, events.size)) this.data.events = events.compacted();
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
    const slot = this.events.slotOf(id);
    return slot === undefined ? undefined : this.events.record(slot);
  }

  /** How many events the state holds. */
  get eventCount(): number {
    return this.events.size;
  }

  /** The journal segments that hold a body of an event the state keeps (see `BodyRef`). */
  bodySegments(): Set<number> {
    const segments = new Set<number>();
    for (const [, ref] of this.bodies()) segments.add(ref.seg);
    return segments;
  }

  /** Where each event's body is kept outside the state, by event id (for the store's files: see `BodyRef`). */
  *bodyRefs(): Generator<[string, BodyRef]> {
    for (const [slot, ref] of this.bodies()) yield [this.events.id(slot), ref];
  }

  /** The slots whose body is kept outside the state, and where (no event id made). */
  private *bodies(): Generator<[number, BodyRef]> {
    for (const slot of this.events.inSlotOrder()) {
      const ref = this.events.bodyRef(slot);
      if (ref) yield [slot, ref];
    }
  }

  listEvents(filter: EventFilter = {}): Array<EventRecord & { run: Run | undefined }> {
    const limit = filter.limit ?? 100;
    let skip = filter.offset ?? 0;
    const out: Array<EventRecord & { run: Run | undefined }> = [];
    const since = filter.since ? Date.parse(filter.since) : undefined;
    const { events } = this;
    const ofResource = filter.resourceId ? events.resourceIdIs(filter.resourceId) : undefined;
    for (const slot of this.eventsNewestFirst(filter.status)) {
      if (since !== undefined && events.receivedMs(slot) < since) break;
      if (filter.type && events.type(slot) !== filter.type) continue;
      if (ofResource && !ofResource(slot)) continue;
      // From the slot itself (no id made and looked up), unless its run is one of the other runs.
      const status = events.hasRun(slot) ? events.runStatus(slot) : undefined;
      if (filter.status && status !== undefined && status !== filter.status) continue;
      const run = events.hasRun(slot) ? this.tableRun(slot) : this.data.runs[runKeys.event(events.id(slot))];
      if (filter.status && run?.status !== filter.status) continue;
      if (skip > 0) {
        skip -= 1;
        continue;
      }
      out.push({ ...events.record(slot), run: run ? { ...run } : undefined });
      if (out.length >= limit) break;
    }
    return out;
  }

  /** Newest first, without sorting history: from the receive order, or the few events still dispatching. */
  private *eventsNewestFirst(status: EventFilter['status']): Generator<number> {
    const { events } = this;
    if (status === 'pending' || status === 'running') {
      const slots = [...events.active.ascending()];
      // A dispatch run enqueued apart from its event (earlier versions) is one of the other runs.
      for (const key of this.activeRuns) {
        const eventId = eventIdOf(key);
        const slot = eventId === undefined ? undefined : events.slotOf(eventId);
        if (slot !== undefined && !events.hasRun(slot)) slots.push(slot);
      }
      yield* slots.sort((a, b) => events.receivedMs(b) - events.receivedMs(a) || a - b);
      return;
    }
    yield* events.newestFirst();
  }

  getRun(key: string): Run | undefined {
    const run = this.runOf(key);
    return run ? { ...run } : undefined;
  }

  listRuns(filter: RunFilter = {}): Run[] {
    return pageOf(this.wholeRuns(this.matchingRuns(filter, filter.newestFirst ?? false)), filter.offset ?? 0, filter.limit ?? 100);
  }

  /** The runs of `refs`, whole, as they are read (lazily: a page stops at its limit). */
  private *wholeRuns(refs: Iterable<RunRef>): Generator<Run> {
    for (const ref of refs) yield (typeof ref === 'number' ? this.tableRun(ref) : this.data.runs[ref]) as Run;
  }

  countRuns(filter: RunCountFilter = {}): number {
    let count = 0;
    for (const _ref of this.matchingRuns(filter, false)) count += 1;
    return count;
  }

  /**
   * The runs `filter` matches, in the order they were made (or newest first): the table's and the
   * others merged by when each was made. Fresh runs are matched without being made whole.
   */
  private *matchingRuns(filter: RunCountFilter, newestFirst: boolean): Generator<RunRef> {
    const statuses = filter.status === undefined ? undefined : Array.isArray(filter.status) ? filter.status : [filter.status];
    const dueBy = filter.dueBy === undefined ? undefined : Date.parse(filter.dueBy);
    // Only pending and running runs can be due: then the indexes of what is still to do are enough.
    const activeOnly = dueBy !== undefined || (statuses !== undefined && statuses.every((s) => s === 'pending' || s === 'running'));
    const { events } = this;
    // Every run the table holds is of kind `event`.
    const tableRefs = filter.kind !== undefined && filter.kind !== 'event' ? [] : activeOnly ? (newestFirst ? events.active.descending() : events.active.ascending()) : withRuns(events, newestFirst);
    const runSeqs = this.runSeqs;
    const others = this.data.runs;
    const otherKeys = activeOnly
      ? [...this.activeRuns].filter((key) => !filter.kind || others[key]?.kind === filter.kind).sort((a, b) => (runSeqs.get(a) ?? 0) - (runSeqs.get(b) ?? 0))
      : Object.keys(others);
    if (newestFirst) otherKeys.reverse();
    const seqOf = (ref: RunRef) => (typeof ref === 'number' ? events.runSeq(ref) : (runSeqs.get(ref) ?? 0));
    for (const ref of merged<RunRef>(tableRefs, otherKeys, seqOf, newestFirst)) {
      if (typeof ref === 'number') {
        const since = events.freshSince(ref);
        if (since !== undefined) {
          if (statuses && !statuses.includes('pending')) continue;
          if (dueBy !== undefined && !(since <= dueBy)) continue;
          yield ref;
          continue;
        }
      }
      const run = (typeof ref === 'number' ? events.wholeRun(ref) : this.data.runs[ref]) as Run;
      if (filter.kind && run.kind !== filter.kind) continue;
      if (statuses && !statuses.includes(run.status)) continue;
      if (dueBy !== undefined && !StoreState.claimable(run, dueBy)) continue;
      yield ref;
    }
  }

  /** The data as a snapshot holds it: events as records, every run whole, in the order they were made. */
  snapshotData(): StateData {
    const events = dictionary<EventRecord>();
    for (const slot of this.events.inSlotOrder()) events[this.events.id(slot)] = this.events.record(slot);
    const runs = dictionary<Run>();
    for (const run of this.wholeRuns(this.matchingRuns({}, false))) runs[run.key] = run;
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
   * The overview's counts at `now`: events of the last day from the newest end of the receive order,
   * the backlog from the indexes of what is still to do; resources are counted in one pass.
   */
  summarize(now: number): StoreSummary {
    const hourAgo = now - 3_600_000;
    const dayAgo = now - 86_400_000;
    const { events } = this;
    const byType = new Map<string, { type: string; lastHour: number; lastDay: number }>();
    for (const slot of events.newestFirst()) {
      const receivedAt = events.receivedMs(slot);
      if (receivedAt < dayAgo) break;
      const type = events.type(slot);
      const counts = byType.get(type) ?? { type, lastHour: 0, lastDay: 0 };
      counts.lastDay += 1;
      if (receivedAt >= hourAgo) counts.lastHour += 1;
      byType.set(type, counts);
    }
    const dispatch: StoreSummary['dispatch'] = { pending: 0, running: 0, failed: events.failed.size, oldestQueuedAt: undefined };
    const fulfillment: StoreSummary['fulfillment'] = { pending: 0, running: 0, failed: 0 };
    // From the indexes: what is still to do, and what failed for good (never every run ever stored).
    for (const key of this.failedRuns) (this.data.runs[key]?.kind === 'event' ? dispatch : fulfillment).failed += 1;
    const waiting = (run: Run) => {
      const counts = run.kind === 'event' ? dispatch : fulfillment;
      if (run.status === 'pending' || run.status === 'running') counts[run.status] += 1;
      // Waiting since it was last due, not since it was made: a run retried by command (or after a
      // backoff) is a fresh wait, and an old event retried must not read as an old backlog.
      if (run.kind === 'event' && (dispatch.oldestQueuedAt === undefined || run.nextAttemptAt < dispatch.oldestQueuedAt)) dispatch.oldestQueuedAt = run.nextAttemptAt;
    };
    // The oldest fresh run by its time in ms, written out once at the end (not once per waiting event).
    let oldestFresh: { slot: number; at: number } | undefined;
    for (const slot of events.active.ascending()) {
      const since = events.freshSince(slot);
      if (since === undefined) {
        waiting(events.wholeRun(slot) as Run);
        continue;
      }
      dispatch.pending += 1;
      if (oldestFresh === undefined || since < oldestFresh.at) oldestFresh = { slot, at: since };
    }
    for (const key of this.activeRuns) waiting(this.data.runs[key] as Run);
    if (oldestFresh) {
      const createdAt = (this.tableRun(oldestFresh.slot) as Run).createdAt;
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

/** What a frozen view keeps of a table slot changed since the freeze: its run, and its event once that changed too. */
interface SlotImage {
  run: Run | undefined;
  seq: number;
  record?: EventRecord | undefined;
}

interface Frozen {
  before: Record<StateMap, Map<string, unknown>>;
  slots: Map<number, SlotImage>;
  slotCount: number;
  deadLetters: number;
}

/** The table's slots that hold a run, in slot order (or the reverse). */
function* withRuns(events: EventTable, reverse: boolean): Generator<number> {
  for (const slot of events.inSlotOrder(reverse)) if (events.hasRun(slot)) yield slot;
}

/** Two sequences, each in `seq` order (ascending, or descending when `descending`), as one in that order. */
function* merged<T>(first: Iterable<T>, second: Iterable<T>, seq: (item: T) => number, descending: boolean): Generator<T> {
  const a = first[Symbol.iterator]();
  const b = second[Symbol.iterator]();
  let x = a.next();
  let y = b.next();
  while (!x.done || !y.done) {
    const takeFirst = y.done || (!x.done && (descending ? seq(x.value) >= seq(y.value) : seq(x.value) <= seq(y.value)));
    if (takeFirst) {
      yield x.value as T;
      x = a.next();
    } else {
      yield y.value as T;
      y = b.next();
    }
  }
}

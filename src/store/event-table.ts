import { hashText, SlotIndex } from './slot-index.js';
import { SlotSet } from './slot-set.js';
import { TextArena } from './text-arena.js';
import type { BodyRef, EventRecord } from './state.js';
import type { Run } from './types.js';

/**
 * Every event a state holds, and the dispatch run made with it, as columns rather than objects:
 * one slot per event, numbers in typed arrays, ids and resource ids as UTF-8 in a `TextArena`
 * found through a `SlotIndex`, the few distinct type/environment/kind words as indexes into one
 * list; a run not claimed yet is a byte (its every field follows from the event), and the runs
 * still to do are bits of a bitmap. So a waiting event is no object in V8's heap at all. The state
 * keeps every event ever received (for dedupe) and a backlog waits here: these ~180 bytes per
 * event are what a backlog and its history cost, against ~450 as objects, strings, a run key and
 * index entries each (see `Stores` in the README).
 *
 * Every run kept here is of kind `event`. Slots are handed out in insertion order and never reused;
 * a forgotten event leaves a hole until `compacted()` renumbers. Reading a slot that holds no event
 * is a caller's bug.
 */
export class EventTable {
  /** Ids and resource ids, as UTF-8: where each is (`pos`) and its length in bytes (`IdLen` when not there). */
  private readonly text = new TextArena();
  private readonly idPos = new Column(Float64Array);
  private readonly idLens = new Column(Int32Array);
  private readonly idHashes = new Column(Int32Array);
  private readonly resourcePos = new Column(Float64Array);
  private readonly resourceLens = new Column(Int32Array);
  /** Ids and resource ids the arena cannot hold: a lone surrogate, or a resource id that is not text. */
  private readonly oddIds = new Map<number, { id?: string; resourceId?: unknown }>();
  /** Event id → slot. */
  private readonly index = new SlotIndex(
    (slot) => this.idHashes.get(slot),
    (slot, id) => this.holdsId(slot, id),
  );
  /** type, environment and resourceKind: indexes into `words` (0 = undefined). */
  private readonly types = new Column(Int32Array);
  private readonly environments = new Column(Int32Array);
  private readonly kinds = new Column(Int32Array);
  /** createdAt and receivedAt in ms (NaN when they do not parse), and how each is written (`TimeForm`). */
  private readonly created = new Column(Float64Array);
  private readonly received = new Column(Float64Array);
  private readonly forms = new Column(Uint8Array);
  /** Where the body is kept outside the state (`BodyRef`); `seg` -1 without one. */
  private readonly segs = new Column(Int32Array);
  private readonly offs = new Column(Float64Array);
  private readonly lens = new Column(Float64Array);
  /** What the table cannot keep as columns: times written otherwise, bodies held inline. */
  private readonly oddTimes = new Map<number, { createdAt?: string; receivedAt?: string }>();
  private readonly inlineBodies = new Map<number, string>();
  /** Slots by `receivedAt`, oldest first (ties in insertion order), holes left out on compaction. */
  private order = new Int32Array(INITIAL);
  private orderLength = 0;
  private slots = 0;
  private readonly words = new Words();
  /** The dispatch run made with each event (`RunForm`), and when it was made (the state's run sequence). */
  private readonly runForms = new Column(Uint8Array);
  private readonly runSeqs = new Column(Float64Array);
  private readonly freshTimes = new Map<number, number>();
  private readonly wholeRuns = new Map<number, Run>();
  /** Slots whose run is still to do (pending or running), and whose run failed for good. */
  readonly active = new SlotSet();
  readonly failed = new SlotSet();

  /** Events held (holes not counted). */
  get size(): number {
    return this.index.size;
  }

  /** Slots handed out so far, holes included: every slot is below this. */
  get slotCount(): number {
    return this.slots;
  }

  slotOf(id: string): number | undefined {
    return this.index.find(id, hashText(id));
  }

  /** Add `event` (its id not held yet) in the next slot; returns the slot. */
  insert(event: EventRecord): number {
    const slot = this.slots;
    this.setId(slot, event.id);
    this.setResourceId(slot, event.resourceId);
    this.types.set(slot, this.words.of(event.type));
    this.environments.set(slot, this.words.of(event.environment));
    this.kinds.set(slot, this.words.of(event.resourceKind));
    const created = timeOf(event.createdAt);
    const received = timeOf(event.receivedAt);
    this.created.set(slot, created.ms);
    this.received.set(slot, received.ms);
    this.forms.set(slot, created.form | (received.form << 2));
    if (created.form === TimeForm.Text || received.form === TimeForm.Text) {
      this.oddTimes.set(slot, {
        ...(created.form === TimeForm.Text ? { createdAt: event.createdAt } : {}),
        ...(received.form === TimeForm.Text ? { receivedAt: event.receivedAt } : {}),
      });
    }
    this.setBody(slot, event.body, event.bodyRef);
    // Counted once every column holds it (a slot below `slots` reads as an event).
    this.slots += 1;
    this.placeInOrder(slot);
    return slot;
  }

  id(slot: number): string {
    const len = this.idLens.get(slot);
    return len >= 0 ? this.text.read(this.idPos.get(slot), len) : (this.oddIds.get(slot)?.id as string);
  }

  has(slot: number): boolean {
    return slot < this.slots && this.idLens.get(slot) !== IdLen.Forgotten;
  }

  type(slot: number): string {
    return this.words.at(this.types.get(slot)) as string;
  }

  resourceId(slot: number): string | undefined {
    const len = this.resourceLens.get(slot);
    if (len >= 0) return this.text.read(this.resourcePos.get(slot), len);
    return len === IdLen.Odd ? (this.oddIds.get(slot)?.resourceId as string | undefined) : undefined;
  }

  /** A test of whether a slot's resource id is `resourceId`, which makes no string of each (for scans). */
  resourceIdIs(resourceId: string): (slot: number) => boolean {
    // A probe with a lone surrogate would encode like a stored U+FFFD: it can only be one kept apart.
    const inArena = TextArena.storable(resourceId) ? this.text.matcher(resourceId) : () => false;
    return (slot) => {
      const len = this.resourceLens.get(slot);
      return len >= 0 ? inArena(this.resourcePos.get(slot), len) : this.resourceId(slot) === resourceId;
    };
  }

  /** `receivedAt` in ms, for ordering and comparisons (one that does not parse sorts first). */
  receivedMs(slot: number): number {
    const ms = this.received.get(slot);
    return Number.isNaN(ms) ? Number.NEGATIVE_INFINITY : ms;
  }

  /** Whether `receivedAt` is exactly `toISOString()` of `ms`. */
  receivedExactlyAt(slot: number, ms: number): boolean {
    return (this.forms.get(slot) >> 2) === TimeForm.Iso && this.received.get(slot) === ms;
  }

  receivedAt(slot: number): string {
    return this.timeText(slot, 'receivedAt');
  }

  /** Whether the event still has its body (inline or kept outside). */
  hasBody(slot: number): boolean {
    return this.segs.get(slot) !== -1 || this.inlineBodies.has(slot);
  }

  /** Where the body is kept outside the state, if it is. */
  bodyRef(slot: number): BodyRef | undefined {
    const seg = this.segs.get(slot);
    return seg < 0 ? undefined : { seg, off: this.offs.get(slot), len: this.lens.get(slot) };
  }

  /** The event in `slot`, as `EventRecord` (a new object: callers may keep or change it). */
  record(slot: number): EventRecord {
    return {
      id: this.id(slot),
      type: this.type(slot),
      environment: this.words.at(this.environments.get(slot)) as EventRecord['environment'],
      createdAt: this.timeText(slot, 'createdAt'),
      receivedAt: this.timeText(slot, 'receivedAt'),
      resourceKind: this.words.at(this.kinds.get(slot)) as EventRecord['resourceKind'],
      resourceId: this.resourceId(slot),
      body: this.inlineBodies.get(slot),
      bodyRef: this.bodyRef(slot),
    };
  }

  /** Drop the body (its payload pruned); the event stays for dedupe. */
  dropBody(slot: number): void {
    this.setBody(slot, undefined, undefined);
  }

  /** Forget the event in `slot`: its id is free again and the slot becomes a hole. */
  forget(slot: number): void {
    this.index.remove(slot, this.idHashes.get(slot));
    // The bytes stay in the arena until the table is compacted.
    this.idLens.set(slot, IdLen.Forgotten);
    this.resourceLens.set(slot, IdLen.None);
    this.oddIds.delete(slot);
    this.oddTimes.delete(slot);
    this.setBody(slot, undefined, undefined);
    this.clearRun(slot);
  }

  // The dispatch runs.

  hasRun(slot: number): boolean {
    return this.runForms.get(slot) !== RunForm.None;
  }

  /** When the slot's run was made, in the state's run sequence (-1 without a run). */
  runSeq(slot: number): number {
    return this.hasRun(slot) ? this.runSeqs.get(slot) : -1;
  }

  /** For a run not claimed yet: when it was enqueued (and is due), in ms; else undefined. */
  freshSince(slot: number): number | undefined {
    const form = this.runForms.get(slot);
    return form === RunForm.FreshAtReceipt ? this.received.get(slot) : form === RunForm.FreshAt ? this.freshTimes.get(slot) : undefined;
  }

  /** Whether a run not claimed yet was enqueued at the event's `receivedAt`, as written. */
  freshAtReceipt(slot: number): boolean {
    return this.runForms.get(slot) === RunForm.FreshAtReceipt;
  }

  /** The run once claimed (whole); undefined while fresh or without one. */
  wholeRun(slot: number): Run | undefined {
    return this.runForms.get(slot) === RunForm.Whole ? this.wholeRuns.get(slot) : undefined;
  }

  runStatus(slot: number): Run['status'] | undefined {
    const form = this.runForms.get(slot);
    return form === RunForm.None ? undefined : form === RunForm.Whole ? this.wholeRuns.get(slot)?.status : 'pending';
  }

  /** Give the slot a fresh run made `seq`-th, enqueued at `at` ms (the event's `receivedAt` when undefined). */
  setFresh(slot: number, seq: number, at?: number): void {
    this.clearRun(slot);
    this.runSeqs.set(slot, seq);
    if (at === undefined) this.runForms.set(slot, RunForm.FreshAtReceipt);
    else {
      this.runForms.set(slot, RunForm.FreshAt);
      this.freshTimes.set(slot, at);
    }
    this.active.add(slot);
  }

  /** Store the slot's run whole (a claim and everything after it), keeping when it was made. */
  setWholeRun(slot: number, run: Run, seq = this.runSeqs.get(slot)): void {
    this.clearRun(slot);
    this.runSeqs.set(slot, seq);
    this.runForms.set(slot, RunForm.Whole);
    this.wholeRuns.set(slot, run);
    if (run.status === 'pending' || run.status === 'running') this.active.add(slot);
    if (run.status === 'failed') this.failed.add(slot);
  }

  private clearRun(slot: number): void {
    this.runForms.set(slot, RunForm.None);
    this.freshTimes.delete(slot);
    this.wholeRuns.delete(slot);
    this.active.delete(slot);
    this.failed.delete(slot);
  }

  /** Live slots, newest received first. */
  *newestFirst(): Generator<number> {
    for (let i = this.orderLength - 1; i >= 0; i--) {
      const slot = this.order[i] as number;
      if (this.has(slot)) yield slot;
    }
  }

  /** Live slots in slot (insertion) order, or the reverse. */
  *inSlotOrder(reverse = false): Generator<number> {
    if (reverse) {
      for (let slot = this.slots - 1; slot >= 0; slot--) if (this.has(slot)) yield slot;
    } else {
      for (let slot = 0; slot < this.slots; slot++) if (this.has(slot)) yield slot;
    }
  }

  /**
   * Sort the receive order again, ties by `rank` (a state opened from a snapshot slots events in
   * the order their runs were made, but ties in `receivedAt` keep the snapshot's order of events).
   */
  sortReceiveOrder(rank: (slot: number) => number): void {
    const sorted = [...this.order.subarray(0, this.orderLength)].sort((a, b) => this.receivedMs(a) - this.receivedMs(b) || rank(a) - rank(b));
    this.order.set(sorted);
  }

  /** Holes left by forgotten events. */
  get holes(): number {
    return this.slots - this.index.size;
  }

  /** The same events and runs in a table without holes, slots renumbered in slot order. */
  compacted(): EventTable {
    const next = new EventTable();
    for (const slot of this.inSlotOrder()) {
      const to = next.insert(this.record(slot));
      const whole = this.wholeRun(slot);
      if (whole) next.setWholeRun(to, whole, this.runSeqs.get(slot));
      else if (this.hasRun(slot)) next.setFresh(to, this.runSeqs.get(slot), this.freshAtReceipt(slot) ? undefined : this.freshSince(slot));
    }
    return next;
  }

  private setId(slot: number, id: string): void {
    const hash = hashText(id);
    this.idHashes.set(slot, hash);
    if (TextArena.storable(id)) {
      const { pos, len } = this.text.write(id);
      this.idPos.set(slot, pos);
      this.idLens.set(slot, len);
    } else {
      this.idLens.set(slot, IdLen.Odd);
      this.oddIds.set(slot, { id });
    }
    this.index.add(slot, hash);
  }

  private setResourceId(slot: number, resourceId: unknown): void {
    if (resourceId === undefined) {
      this.resourceLens.set(slot, IdLen.None);
    } else if (typeof resourceId === 'string' && TextArena.storable(resourceId)) {
      const { pos, len } = this.text.write(resourceId);
      this.resourcePos.set(slot, pos);
      this.resourceLens.set(slot, len);
    } else {
      this.resourceLens.set(slot, IdLen.Odd);
      this.oddIds.set(slot, { ...this.oddIds.get(slot), resourceId });
    }
  }

  private holdsId(slot: number, id: string): boolean {
    const len = this.idLens.get(slot);
    // A probe with a lone surrogate would encode like a stored U+FFFD: it can only be one kept apart.
    return len >= 0 ? TextArena.storable(id) && this.text.equals(this.idPos.get(slot), len, id) : len === IdLen.Odd && this.oddIds.get(slot)?.id === id;
  }

  private timeText(slot: number, field: 'createdAt' | 'receivedAt'): string {
    const form = field === 'createdAt' ? this.forms.get(slot) & 3 : this.forms.get(slot) >> 2;
    if (form === TimeForm.Text) return this.oddTimes.get(slot)?.[field] as string;
    const iso = new Date((field === 'createdAt' ? this.created : this.received).get(slot)).toISOString();
    return form === TimeForm.Iso ? iso : `${iso.slice(0, -5)}Z`;
  }

  private setBody(slot: number, body: string | undefined, ref: BodyRef | undefined): void {
    if (body === undefined) this.inlineBodies.delete(slot);
    else this.inlineBodies.set(slot, body);
    this.segs.set(slot, ref ? ref.seg : -1);
    this.offs.set(slot, ref ? ref.off : 0);
    this.lens.set(slot, ref ? ref.len : 0);
  }

  /** Events arrive nearly in `receivedAt` order: append, or binary-search the place of a late one. */
  private placeInOrder(slot: number): void {
    if (this.orderLength === this.order.length) this.order = grown(this.order, this.order.length * 2);
    const at = this.receivedMs(slot);
    let low = this.orderLength;
    if (low > 0 && this.receivedMs(this.order[low - 1] as number) > at) {
      low = 0;
      for (let high = this.orderLength - 1; low < high; ) {
        const mid = (low + high) >>> 1;
        if (this.receivedMs(this.order[mid] as number) > at) high = mid;
        else low = mid + 1;
      }
      this.order.copyWithin(low + 1, low, this.orderLength);
    }
    this.order[low] = slot;
    this.orderLength += 1;
  }
}

const INITIAL = 1024;

/** Slots per page of a column. */
const PAGE_BITS = 12;
const PAGE_MASK = (1 << PAGE_BITS) - 1;

/**
 * One number per slot, in pages of 4,096 that are added as slots are, never copied: a column
 * grown by doubling would leave its old array behind for the collector at every doubling.
 */
class Column {
  private readonly pages: TypedArray[] = [];

  constructor(private readonly Page: new (length: number) => TypedArray) {}

  /** 0 where nothing was set, as in a typed array. */
  get(slot: number): number {
    return this.pages[slot >>> PAGE_BITS]?.[slot & PAGE_MASK] ?? 0;
  }

  set(slot: number, value: number): void {
    const index = slot >>> PAGE_BITS;
    while (this.pages.length <= index) this.pages.push(new this.Page(1 << PAGE_BITS));
    (this.pages[index] as TypedArray)[slot & PAGE_MASK] = value;
  }
}

type TypedArray = Int32Array | Float64Array | Uint8Array;

function grown<T extends TypedArray>(column: T, size: number): T {
  const next = new (column.constructor as new (size: number) => T)(size);
  next.set(column);
  return next;
}

/** An id's or resource id's length where it is not in the arena: a forgotten event, no resource id, kept apart (`oddIds`). */
const IdLen = { Forgotten: -1, None: -2, Odd: -3 } as const;

/** How a slot holds its dispatch run: none here, fresh (enqueued at receipt, or at another time), or whole. */
const RunForm = { None: 0, FreshAtReceipt: 1, FreshAt: 2, Whole: 3 } as const;

/**
 * How a time is written: exactly `toISOString()` of its ms; the same without `.000` (as many
 * senders write whole seconds); or any other text, kept as it came so that it reads back byte for
 * byte. The first two cost no string.
 */
const TimeForm = { Iso: 0, IsoSeconds: 1, Text: 2 } as const;
type TimeForm = (typeof TimeForm)[keyof typeof TimeForm];

function timeOf(text: string): { ms: number; form: TimeForm } {
  const ms = Date.parse(text);
  if (Number.isFinite(ms)) {
    const iso = new Date(ms).toISOString();
    if (iso === text) return { ms, form: TimeForm.Iso };
    if (iso.endsWith('.000Z') && text.length === iso.length - 4 && text === `${iso.slice(0, -5)}Z`) return { ms, form: TimeForm.IsoSeconds };
  }
  return { ms, form: TimeForm.Text };
}

/**
 * The distinct values of the events' `type`, `environment` and `resourceKind`, each kept once (index
 * 0 is undefined). Few in practice: the service's event types, two environments, two kinds.
 */
class Words {
  private readonly list: Array<string | undefined> = [undefined];
  private readonly indexes = new Map<string, number>();

  of(word: string | undefined): number {
    if (word === undefined) return 0;
    let index = this.indexes.get(word);
    if (index === undefined) {
      index = this.list.length;
      this.list.push(word);
      this.indexes.set(word, index);
    }
    return index;
  }

  at(index: number): string | undefined {
    return this.list[index];
  }
}

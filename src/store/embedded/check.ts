import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { ConfigError, StoreError } from '../../errors/index.js';
import type { Op, StateData } from '../state.js';
import { eventIdOf } from '../../runs/keys.js';
import { currentGen, replayBase, replayChain, readFolder, type DamagedLine, type FolderRead, type LineOp, type ReplayStop, type SegmentFile } from './check-scan.js';
import { DirLock } from './dir-lock.js';
import { isNotFound } from './files.js';
import { journalName } from './journal.js';
import { SNAPSHOT_FILE } from './snapshot.js';

/** What `checkStore` found in one journal segment. */
export interface SegmentCheck {
  file: string;
  gen: number;
  /**
   * `current`: the segment the store appends to; `sealed`: closed by a compaction whose snapshot
   * was not written yet (the store replays it on open, then the ones after it); `older`: kept for
   * the event bodies in it (its ops are in the snapshot); `newer`: after the current one, which
   * the store never reads (the snapshot and journals are from different times).
   */
  role: 'current' | 'sealed' | 'older' | 'newer';
  bytes: number;
  /** Complete lines (ending with a newline), damaged ones included. */
  lines: number;
  /** Operations by type, over the lines that decode. */
  ops: Partial<Record<Op['t'], number>>;
  /** Bytes after the last newline: a write cut short, never acknowledged. */
  tornBytes: number;
  damagedLines: number;
  /** The first damaged lines (at most 20). */
  damaged: DamagedLine[];
  /** Events of the store whose raw body is kept in this segment. */
  bodies: number;
}

export type StoreProblemKind = 'snapshot-damaged' | 'damaged-line' | 'torn-tail' | 'newer-segment' | 'segment-gap' | 'missing-segment' | 'damaged-body';

/** One thing wrong with the files, as one line for people and as fields for machines. */
export interface StoreProblem {
  /** `damage`: the store will not open, or it opens without data it had. `warning`: it opens with everything acknowledged. */
  severity: 'damage' | 'warning';
  kind: StoreProblemKind;
  file: string;
  /** Where in the file, for a line or a tail. */
  offset?: number;
  bytes?: number;
  /** Events concerned (a missing or damaged payload): at most 20 ids. */
  eventIds?: string[];
  message: string;
}

/** One change `checkout-kit store recover` makes. */
export type RecoveryAction =
  | { kind: 'truncate'; file: string; fromBytes: number; toBytes: number; reason: string }
  | { kind: 'rewrite-snapshot'; file: string; generation: number; reason: string }
  | { kind: 'set-aside'; file: string; reason: string };

/** What `recoverStore` would do to these files, and what the store would no longer have. */
export interface RecoveryPlan {
  /** Some change is needed (or would be, when recovery is refused). */
  needed: boolean;
  /** Why recovery cannot proceed without losing what only a damaged file held; files are then left alone. */
  refusal?: string;
  actions: RecoveryAction[];
  /** Events the store holds after recovery. */
  keptEvents: number;
  dropped: {
    /** Complete journal lines dropped (the first damaged one and all after it). */
    lines: number;
    /** Bytes dropped, damaged and torn bytes included. */
    bytes: number;
    /** Events whose journal line is dropped (at most 50 ids; `events` counts them all). */
    events: number;
    eventIds: string[];
    /**
     * Handler runs whose completion is dropped (at most 50 keys; `completions` counts them all):
     * the store then holds them as not done, and `serve` or `reconcile` calls those handlers again.
     */
    completions: number;
    completionKeys: string[];
    /** Events kept without their raw body (it is in a missing or damaged place). */
    payloads: number;
    payloadIds: string[];
  };
}

/** `checkStore`'s answer: exit 0 for `healthy` and `warnings`, 1 for `damaged` (see the CLI). */
export interface StoreCheckReport {
  dir: string;
  status: 'healthy' | 'warnings' | 'damaged';
  /** Whether `EmbeddedStore.open()` succeeds on these files. */
  opens: boolean;
  snapshot: { file: string; present: boolean; bytes: number; ok: boolean; generation?: number; events?: number; reason?: string };
  /** The journal generation the store replays and appends to (the snapshot's), when known. */
  generation: number | undefined;
  segments: SegmentCheck[];
  problems: StoreProblem[];
  recovery: RecoveryPlan;
}

export interface StoreCheckOptions {
  /**
   * Read under the store's cross-process lock, so that a write in progress is not taken for a
   * torn line. @default true
   */
  lock?: boolean;
  /** As `EmbeddedStore`'s `lockStaleMs`. @default 10000 */
  lockStaleMs?: number;
}

/**
 * Read every file of an embedded store folder and say what is damaged, what the store would
 * lose, and what `recoverStore` would change. Writes nothing (it may create the empty lock file `store.lock`).
 * @example
 * const report = await checkStore('.checkout-kit');
 * if (report.status === 'damaged') console.log(report.problems.map((p) => p.message).join('\n'));
 */
export async function checkStore(dir: string, options: StoreCheckOptions = {}): Promise<StoreCheckReport> {
  const path = resolve(dir);
  return (await withStoreLock(path, options, () => analyseFolder(path))).report;
}

/** Run `fn` holding the store's lock (unless `lock: false`); the folder must exist. */
export async function withStoreLock<T>(dir: string, options: StoreCheckOptions, fn: () => Promise<T>): Promise<T> {
  try {
    if (!(await stat(dir)).isDirectory()) throw new ConfigError(`${dir} is not a store folder (it is a file). Check CHECKOUT_STORE (or --dir).`);
  } catch (error) {
    if (isNotFound(error)) throw new ConfigError(`There is no store at ${dir}: the folder does not exist. Check CHECKOUT_STORE (or --dir).`, { cause: error });
    throw error;
  }
  const lock = new DirLock(dir, { staleMs: options.lockStaleMs ?? 10_000, disabled: options.lock === false, onCompromised: () => undefined });
  try {
    return await lock.with(fn);
  } finally {
    await lock.close();
  }
}

/** A report plus what executing its plan needs (for `recoverStore`). */
export interface Analysis {
  folder: FolderRead;
  report: StoreCheckReport;
  /** The data of the snapshot to write, when the plan rewrites it. */
  snapshotData(): Promise<StateData>;
}

const LISTED_LINES = 20;
const LISTED_IDS = 50;

/** Read the folder and work out the report and the recovery plan. */
export async function analyseFolder(dir: string): Promise<Analysis> {
  const folder = await readFolder(dir);
  const { snapshot, segments } = folder;
  const maxGen = segments.at(-1)?.gen ?? 0;
  const generation = snapshot.state === 'ok' ? snapshot.snapshot.journalGeneration : snapshot.state === 'absent' ? 0 : undefined;
  // The segments the store reads: from the snapshot's (or 0 without one) through the seals to the current one.
  const current = generation === undefined && snapshot.state === 'damaged' && !snapshot.missing ? maxGen : currentGen(folder, generation ?? 0);
  const roleOf = (gen: number): SegmentCheck['role'] =>
    gen < (generation ?? 0) ? 'older' : gen < current ? 'sealed' : gen === current ? 'current' : 'newer';
  const base = replayBase(folder);
  const replay = base.ok ? replayChain(folder, await base.data(), base.fromGen) : undefined;
  const state = replay?.state;

  // Bodies of the state the replay reached: where each is kept, and whether it is still there.
  const bodies = new Map<number, number>();
  const missingBodies = new Map<number, string[]>();
  const damagedBodies = new Map<number, string[]>();
  const byGen = new Map(segments.map((segment) => [segment.gen, segment]));
  for (const [id, ref] of state?.bodyRefs() ?? []) {
    const segment = byGen.get(ref.seg);
    if (!segment) push(missingBodies, ref.seg, id);
    else if (!bodyIntact(segment, ref.off, ref.len)) push(damagedBodies, ref.seg, id);
    else bodies.set(ref.seg, (bodies.get(ref.seg) ?? 0) + 1);
  }
  const lostPayloads = new Set([...missingBodies.values(), ...damagedBodies.values()].flat());

  const problems: StoreProblem[] = [];
  if (snapshot.state === 'damaged') {
    const effect = snapshot.missing ? 'the store opens without the history it held' : 'the store will not open';
    problems.push({ severity: 'damage', kind: 'snapshot-damaged', file: SNAPSHOT_FILE, bytes: snapshot.bytes, message: `${SNAPSHOT_FILE} is ${snapshot.missing ? '' : 'damaged: '}${snapshot.reason}: ${effect}.` });
  }
  for (const segment of segments) {
    const role = roleOf(segment.gen);
    // A line matters when a replay needs it: the current segment, newer ones, or all when rebuilding.
    const replayed = generation === undefined || segment.gen >= generation;
    segment.damaged.slice(0, LISTED_LINES).forEach((line, i) => {
      const following = segment.ops.filter((op) => op.offset > line.offset);
      const after = i === 0 && following.length > 0 ? `; ${following.length} readable line(s) (${formatBytes(following.reduce((sum, op) => sum + op.bytes, 0))}) follow it` : '';
      problems.push({
        severity: replayed ? 'damage' : 'warning',
        kind: 'damaged-line',
        file: segment.file,
        offset: line.offset,
        bytes: line.bytes,
        message:
          `${segment.file}: damaged line at byte ${line.offset} (${formatBytes(line.bytes)}): ${line.reason}${after}` +
          ((role === 'current' || role === 'sealed') && i === 0 ? '; the store will not open.' : replayed ? '.' : ` (an older segment: its operations are in ${SNAPSHOT_FILE}).`),
      });
    });
    if (segment.damaged.length > LISTED_LINES) {
      problems.push({ severity: replayed ? 'damage' : 'warning', kind: 'damaged-line', file: segment.file, message: `${segment.file}: ${segment.damaged.length - LISTED_LINES} more damaged line(s).` });
    }
    if (segment.tornBytes > 0) {
      const offset = segment.bytes - segment.tornBytes;
      const nul = segment.buffer.subarray(offset).every((byte) => byte === 0) ? ', all NUL bytes' : '';
      problems.push({
        severity: 'warning',
        kind: 'torn-tail',
        file: segment.file,
        offset,
        bytes: segment.tornBytes,
        message:
          `${segment.file}: unfinished last line of ${formatBytes(segment.tornBytes)} at byte ${offset}${nul} (a write cut short, never acknowledged)` +
          (role === 'current' ? '; the store opens without it and its next write removes it.' : '.'),
      });
    }
    if (role === 'newer' && generation !== undefined) {
      problems.push({
        severity: 'damage',
        kind: 'newer-segment',
        file: segment.file,
        message:
          `${segment.file} comes after ${journalName(current)}, which is not sealed: the store never reads its ${segment.ops.length} operation(s) ` +
          `(${SNAPSHOT_FILE} (generation ${generation}) or ${journalName(current)} is older than the journals after it: restored from an old backup?).`,
      });
    }
  }
  if (replay?.stop?.kind === 'line' && replay.stop.cause === 'apply') {
    const { gen, offset, reason } = replay.stop;
    problems.push({ severity: 'damage', kind: 'damaged-line', file: journalName(gen), offset, message: `${journalName(gen)}: the line at byte ${offset} ${reason}.` });
  }
  if (replay?.stop?.kind === 'gap') {
    const { gen } = replay.stop;
    problems.push({ severity: 'damage', kind: 'segment-gap', file: journalName(gen), message: `${journalName(gen)} is missing, yet later segments exist: the operations in them cannot be replayed after the gap.` });
  }
  for (const [gen, ids] of missingBodies) {
    problems.push({ severity: 'damage', kind: 'missing-segment', file: journalName(gen), eventIds: ids.slice(0, LISTED_LINES), message: `${journalName(gen)} is missing: the raw bodies of ${ids.length} event(s) are in it (${sample(ids)}).` });
  }
  for (const [gen, ids] of damagedBodies) {
    problems.push({ severity: 'damage', kind: 'damaged-body', file: journalName(gen), eventIds: ids.slice(0, LISTED_LINES), message: `${journalName(gen)}: the raw bodies of ${ids.length} event(s) are in damaged or missing bytes (${sample(ids)}).` });
  }

  // A missing snapshot does not stop `open()`: it starts empty from journal-0 (which is the damage).
  const snapshotOpens = snapshot.state !== 'damaged' || snapshot.missing === true;
  const opens = snapshotOpens && !(replay?.stop?.kind === 'line' && replay.stop.gen >= (generation ?? 0) && replay.stop.gen <= current);
  const status = problems.some((p) => p.severity === 'damage') ? 'damaged' : problems.length > 0 ? 'warnings' : 'healthy';
  const plan = planRecovery(folder, base.ok ? base : undefined, current, replay?.lastGen ?? 0, replay?.stop, lostPayloads, state?.eventCount ?? 0);
  if (!base.ok) {
    plan.refusal = base.reason;
    plan.needed = true;
  }

  const report: StoreCheckReport = {
    dir,
    status,
    opens,
    snapshot: {
      file: SNAPSHOT_FILE,
      present: snapshot.state === 'ok' || (snapshot.state === 'damaged' && !snapshot.missing),
      bytes: snapshot.state === 'absent' ? 0 : snapshot.bytes,
      ok: snapshot.state !== 'damaged',
      ...(snapshot.state === 'ok' ? { generation: snapshot.snapshot.journalGeneration, events: Object.keys(snapshot.snapshot.data.events).length } : {}),
      ...(snapshot.state === 'damaged' ? { reason: snapshot.reason } : {}),
    },
    generation,
    segments: segments.map((segment) => ({
      file: segment.file,
      gen: segment.gen,
      role: roleOf(segment.gen),
      bytes: segment.bytes,
      lines: segment.ops.length + segment.damaged.length,
      ops: countOps(segment.ops),
      tornBytes: segment.tornBytes,
      damagedLines: segment.damaged.length,
      damaged: segment.damaged.slice(0, LISTED_LINES),
      bodies: bodies.get(segment.gen) ?? 0,
    })),
    problems,
    recovery: plan,
  };

  const lastGen = replay?.lastGen ?? 0;
  return {
    folder,
    report,
    async snapshotData() {
      if (!base.ok) throw new StoreError(base.reason);
      // The state just before the segment that stays current, without references to lost bodies.
      const data = replayChain(folder, await base.data(), base.fromGen, lastGen).state.snapshotData();
      for (const event of Object.values(data.events)) if (event.bodyRef && lostPayloads.has(event.id)) event.bodyRef = undefined;
      return data;
    },
  };
}

/**
 * The last good state is the replay up to its first problem. Recovery makes the files say exactly
 * that: the segment where it stopped becomes current, cut before the problem (a torn tail too);
 * segments after it are set aside; the snapshot is rewritten when the replay did not start from
 * it (rebuilt, or newer segments replayed) or when it refers to bodies that are gone.
 */
function planRecovery(
  folder: FolderRead,
  base: { fromGen: number; rebuilt: boolean } | undefined,
  /** The segment the store appends to now: a replay that went past it read what the store does not. */
  currentGen: number,
  lastGen: number,
  stop: ReplayStop | undefined,
  lostPayloads: Set<string>,
  keptEvents: number,
): RecoveryPlan {
  const plan: RecoveryPlan = {
    needed: false,
    actions: [],
    keptEvents,
    dropped: { lines: 0, bytes: 0, events: 0, eventIds: [], completions: 0, completionKeys: [], payloads: lostPayloads.size, payloadIds: [...lostPayloads].slice(0, LISTED_IDS) },
  };
  if (!base) return plan;
  const droppedEvents: string[] = [];
  const droppedCompletions: string[] = [];
  const drop = (segment: SegmentFile, from: number) => {
    const ops = segment.ops.filter((op) => op.offset >= from);
    plan.dropped.lines += ops.length + segment.damaged.filter((line) => line.offset >= from).length;
    plan.dropped.bytes += segment.bytes - from;
    for (const { op } of ops) {
      if (op.t === 'event') droppedEvents.push(op.event.id);
      else if (op.t === 'complete' && eventIdOf(op.key) === undefined) droppedCompletions.push(op.key);
    }
  };
  if (base.rebuilt || lastGen > currentGen || lostPayloads.size > 0) {
    const why = base.rebuilt
      ? `${SNAPSHOT_FILE} is unusable: rebuilt from ${journalName(0)}${lastGen > 0 ? `…${journalName(lastGen)}` : ''}, all still there`
      : lastGen > currentGen
        ? `replays the segments after ${journalName(currentGen)} that the store never read`
        : `${lostPayloads.size} event(s) refer to raw bodies that are gone: they are kept without them (as if pruned)`;
    plan.actions.push({ kind: 'rewrite-snapshot', file: SNAPSHOT_FILE, generation: lastGen, reason: why });
  }
  const current = folder.segments.find((segment) => segment.gen === lastGen);
  if (current) {
    const keep = stop?.kind === 'line' && stop.gen === lastGen ? stop.offset : current.bytes - current.tornBytes;
    if (keep < current.bytes) {
      drop(current, keep);
      const lines = plan.dropped.lines;
      const reason =
        stop?.kind === 'line' && stop.gen === lastGen
          ? `keeps the ${current.ops.filter((op) => op.offset < keep).length} line(s) before the damaged line at byte ${keep} (${stop.reason}); drops it and the ${lines - 1} complete line(s) after it` +
            (current.tornBytes > 0 ? ` and an unfinished last line of ${current.tornBytes} bytes` : '')
          : `drops an unfinished last line of ${current.tornBytes} bytes (never acknowledged)`;
      plan.actions.push({ kind: 'truncate', file: current.file, fromBytes: current.bytes, toBytes: keep, reason });
    }
  }
  for (const segment of folder.segments.filter((s) => s.gen > lastGen)) {
    drop(segment, 0);
    plan.actions.push({ kind: 'set-aside', file: segment.file, reason: `comes after the last good line (in ${journalName(lastGen)}): moved to the backup folder` });
  }
  plan.dropped.events = droppedEvents.length;
  plan.dropped.eventIds = droppedEvents.slice(0, LISTED_IDS);
  plan.dropped.completions = droppedCompletions.length;
  plan.dropped.completionKeys = droppedCompletions.slice(0, LISTED_IDS);
  plan.needed = plan.actions.length > 0;
  return plan;
}

/** Whether a body reference still points at a JSON string literal. */
function bodyIntact(segment: SegmentFile, off: number, len: number): boolean {
  if (off < 0 || off + len > segment.bytes) return false;
  try {
    return typeof JSON.parse(segment.buffer.toString('utf8', off, off + len)) === 'string';
  } catch {
    return false;
  }
}

function countOps(ops: LineOp[]): Partial<Record<Op['t'], number>> {
  const counts: Partial<Record<Op['t'], number>> = {};
  for (const { op } of ops) counts[op.t] = (counts[op.t] ?? 0) + 1;
  return counts;
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

function sample(ids: string[], count = 3): string {
  return ids.length <= count ? ids.join(', ') : `${ids.slice(0, count).join(', ')}, …`;
}

/** 512 B, 1.5 KiB, 3.2 MiB. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

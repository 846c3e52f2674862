import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { StoreError } from '../../errors/index.js';
import { emptyStateData, StoreState, type Op, type StateData } from '../state.js';
import { AFTER_SEAL, CorruptLineError, decodeJournal, JOURNAL_FILE, journalName } from './journal.js';
import { readSnapshot, SNAPSHOT_FILE, type SnapshotFile } from './snapshot.js';

/**
 * Reading a store folder the way `EmbeddedStore.open()` does, but line by line and without
 * stopping at the first problem, so that `checkStore` can say what is damaged and `recoverStore`
 * what the last good state is. Nothing here writes.
 */

/** A complete line of a journal segment that is not an operation the store can replay. */
export interface DamagedLine {
  /** Byte offset of the line's first byte in its segment. */
  offset: number;
  /** Length of the line, its newline included. */
  bytes: number;
  reason: string;
}

/** A journal line that decodes to an op. */
export interface LineOp {
  offset: number;
  bytes: number;
  op: Op;
}

/** One `journal-<gen>.jsonl`, read whole. */
export interface SegmentFile {
  gen: number;
  file: string;
  bytes: number;
  buffer: Buffer;
  /** Every complete line that decodes, in file order. */
  ops: LineOp[];
  /** Every complete line that does not decode, in file order. */
  damaged: DamagedLine[];
  /** Bytes after the last newline: an append that never finished. */
  tornBytes: number;
  /** Offset of the seal line that closed the segment (compaction went on in the next one). */
  sealedAt: number | undefined;
}

export type SnapshotRead =
  | { state: 'absent' }
  | { state: 'ok'; bytes: number; snapshot: SnapshotFile }
  /** Unreadable, or `missing` while segments after generation 0 exist (the store would open without their history). */
  | { state: 'damaged'; bytes: number; reason: string; missing?: true };

/** What the files of a store folder hold. */
export interface FolderRead {
  dir: string;
  snapshot: SnapshotRead;
  /** Existing segments by generation, oldest first. */
  segments: SegmentFile[];
}

/** Read the snapshot and every journal segment of `dir`. */
export async function readFolder(dir: string): Promise<FolderRead> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (error) {
    throw new StoreError(`Cannot read the store folder ${dir}: ${(error as Error).message}. Check that it exists and its permissions.`, { cause: error });
  }
  const gens = names
    .flatMap((name) => JOURNAL_FILE.exec(name)?.[1] ?? [])
    .map(Number)
    .sort((a, b) => a - b);
  const segments: SegmentFile[] = [];
  for (const gen of gens) {
    const buffer = await readFile(join(dir, journalName(gen)));
    segments.push(scanSegment(gen, buffer));
  }
  const last = segments.at(-1)?.gen ?? 0;
  // Without a snapshot the store replays from journal-0 through the seals: that is every segment
  // only when no compaction finished yet (one was cut short after its seal, or none ran).
  const chained = segments.every((segment, i) => segment.gen === i && (segment.gen === last || segment.sealedAt !== undefined));
  const snapshot: SnapshotRead = names.includes(SNAPSHOT_FILE)
    ? await readSnapshotFile(dir)
    : last > 0 && !chained
      ? { state: 'damaged', bytes: 0, reason: `missing, yet ${journalName(last)} exists: compaction wrote a snapshot that is gone`, missing: true }
      : { state: 'absent' };
  return { dir, snapshot, segments };
}

/** The snapshot through the store's own reader, so that "damaged" means what it means to `open()`. */
async function readSnapshotFile(dir: string): Promise<SnapshotRead> {
  const raw = await readFile(join(dir, SNAPSHOT_FILE));
  try {
    return { state: 'ok', bytes: raw.length, snapshot: await readSnapshot(dir) };
  } catch (error) {
    if (!(error instanceof StoreError) || !/ is damaged \(/.test(error.message)) throw error;
    const why = error.cause instanceof SyntaxError ? `not valid JSON: ${error.cause.message}` : raw.length === 0 ? 'empty' : 'not a checkout-kit snapshot (version 1)';
    return { state: 'damaged', bytes: raw.length, reason: withNuls(raw, why) };
  }
}

/** Split a segment into lines and decode each one with the store's own decoder. */
export function scanSegment(gen: number, buffer: Buffer): SegmentFile {
  const ops: LineOp[] = [];
  const damaged: DamagedLine[] = [];
  let sealedAt: number | undefined;
  let start = 0;
  for (let end = buffer.indexOf(10, start); end !== -1; end = buffer.indexOf(10, start)) {
    const line = buffer.subarray(start, end + 1);
    try {
      // Lines are decoded one at a time, so the rule decodeJournal applies within a chunk is applied here.
      if (sealedAt !== undefined) throw new CorruptLineError(start, AFTER_SEAL);
      // One line at a time, based at its own offset: body references come out as the store makes them.
      const decoded = decodeJournal(line, start, gen);
      if (decoded.sealed) sealedAt = start;
      else ops.push({ offset: start, bytes: line.length, op: decoded.ops[0] as Op });
    } catch (error) {
      if (!(error instanceof CorruptLineError)) throw error;
      damaged.push({ offset: start, bytes: line.length, reason: line.length === 1 ? 'empty line' : withNuls(line, error.reason) + lineHint(line) });
    }
    start = end + 1;
  }
  return { gen, file: journalName(gen), bytes: buffer.length, buffer, ops, damaged, tornBytes: buffer.length - start, sealedAt };
}

/**
 * The segment `open()` appends to: from `fromGen`, the first one without a seal (or missing).
 * Segments from `fromGen` up to it are the ones the store reads; later ones it never reads.
 */
export function currentGen(folder: FolderRead, fromGen: number): number {
  const byGen = new Map(folder.segments.map((segment) => [segment.gen, segment]));
  let gen = fromGen;
  while (byGen.get(gen)?.sealedAt !== undefined) gen += 1;
  return gen;
}

/** What a damaged line seems to have been, from its readable start: ` (it looks like event evt_1)`. */
function lineHint(line: Buffer): string {
  const head = line.toString('utf8', 0, Math.min(line.length, 512));
  const type = /^\{"t":"([A-Za-z]+)"/.exec(head)?.[1];
  if (!type) return '';
  const id = type === 'event' ? /"event":\{"id":("(?:[^"\\]|\\.)*")/.exec(head)?.[1] : undefined;
  try {
    if (id) return ` (it looks like event ${JSON.parse(id) as string})`;
  } catch {
    // An id cut in the middle of an escape: say only what the line was.
  }
  return ` (it looks like ${type === 'event' ? 'an' : 'a'} ${type} operation)`;
}

/** A reason, with the NUL bytes of `bytes` counted first when there are any (zeroed blocks are the usual damage). */
export function withNuls(bytes: Buffer, reason: string): string {
  const content = bytes.at(-1) === 10 ? bytes.subarray(0, -1) : bytes;
  let count = 0;
  for (const byte of content) if (byte === 0) count += 1;
  if (count === 0) return reason;
  return count === content.length ? `all ${count} bytes are NUL` : `${count} NUL bytes from byte ${content.indexOf(0)} of the line; ${reason}`;
}

/** How far replaying a chain of segments got. */
export interface Replay {
  state: StoreState;
  /** The last segment replayed (its good prefix, at least). */
  lastGen: number;
  /** Where the replay stopped early: a damaged line, an op that cannot be applied, or a missing segment. */
  stop: ReplayStop | undefined;
}

export type ReplayStop =
  /** At a line that does not decode (`damaged`) or whose op cannot be applied (`apply`). */
  | { kind: 'line'; cause: 'damaged' | 'apply'; gen: number; offset: number; reason: string }
  /** At a missing segment with later ones after it. */
  | { kind: 'gap'; gen: number };

/**
 * Apply `data`, then the ops of segments `fromGen`, `fromGen + 1`, … in order, as `open()` would
 * for one segment, stopping at the first line that does not decode or apply, or at a missing
 * segment followed by later ones. Stops before `untilGen` when it is given.
 */
export function replayChain(folder: FolderRead, data: StateData, fromGen: number, untilGen = Number.POSITIVE_INFINITY): Replay {
  const state = new StoreState(data);
  const byGen = new Map(folder.segments.map((segment) => [segment.gen, segment]));
  const maxGen = Math.max(fromGen, ...folder.segments.map((segment) => segment.gen));
  let lastGen = fromGen;
  for (let gen = fromGen; gen <= maxGen && gen < untilGen; gen++) {
    const segment = byGen.get(gen);
    if (!segment) {
      // Segments are created empty at compaction; only one missing before later ones loses ops.
      if (gen < maxGen) return { state, lastGen, stop: { kind: 'gap', gen } };
      lastGen = gen;
      continue;
    }
    lastGen = gen;
    const firstDamage = segment.damaged[0]?.offset ?? Number.POSITIVE_INFINITY;
    for (const { offset, op } of segment.ops) {
      if (offset > firstDamage) break;
      try {
        state.apply(op);
      } catch (error) {
        return { state, lastGen, stop: { kind: 'line', cause: 'apply', gen, offset, reason: `cannot be applied (${(error as Error).message})` } };
      }
    }
    const damage = segment.damaged[0];
    if (damage) return { state, lastGen, stop: { kind: 'line', cause: 'damaged', gen, offset: damage.offset, reason: damage.reason } };
  }
  return { state, lastGen, stop: undefined };
}

/** The state a replay starts from and the generation of its first segment, or why there is none. */
export type ReplayBase = { ok: true; data: () => Promise<StateData>; fromGen: number; rebuilt: boolean } | { ok: false; reason: string };

/**
 * Where the last good state starts: the snapshot when it reads; nothing (generation 0) when there
 * is none; and when it is damaged, nothing again but only if every segment from 0 on still exists,
 * since compaction deletes the segments whose ops the snapshot holds once no body is left in them.
 */
export function replayBase(folder: FolderRead): ReplayBase {
  const { snapshot } = folder;
  if (snapshot.state === 'ok') return { ok: true, data: async () => (await readSnapshot(folder.dir)).data, fromGen: snapshot.snapshot.journalGeneration, rebuilt: false };
  if (snapshot.state === 'absent') return { ok: true, data: async () => emptyStateData(), fromGen: 0, rebuilt: false };
  const gens = folder.segments.map((segment) => segment.gen);
  const lowest = gens[0];
  if (lowest === 0 && gens.every((gen, i) => gen === i)) return { ok: true, data: async () => emptyStateData(), fromGen: 0, rebuilt: true };
  const present = gens.length === 0 ? 'there are no journal segments' : `the oldest journal left is ${journalName(lowest as number)}`;
  const missing = gens.length === 0 || lowest === 0 ? 'some journal segments are missing' : `${journalName(0)}…${journalName((lowest as number) - 1)} were deleted after earlier compactions`;
  return {
    ok: false,
    reason:
      `${SNAPSHOT_FILE} is damaged and it cannot be rebuilt from the journals: ${missing} (${present}), and what they recorded ` +
      `(events, handler runs, payments, checkout attempts) exists only in ${SNAPSHOT_FILE}. Rebuilding from the journals that are left would lose it. ` +
      `Restore ${SNAPSHOT_FILE} from a backup of the store folder (the journals that follow it are intact), then run \`checkout-kit store check\` again.`,
  };
}

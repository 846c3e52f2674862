import type { EventRecord, Op } from '../state.js';

/** Journal segment `gen`: one JSON op per line, appended under the store lock, never rewritten. */
export const journalName = (gen: number): string => `journal-${gen}.jsonl`;
export const JOURNAL_FILE = /^journal-(\d+)\.jsonl$/;

/**
 * An event line carries its body last, as a top-level field: `{"t":"event",…,"event":{…},"body":"…"}`.
 * The body's JSON string literal then sits at a byte range of the file that the state can point to
 * (a `BodyRef`) instead of holding the body. The separator cannot occur inside the literal (every
 * quote there is escaped), so the last one on the line is where the body starts.
 */
const BODY_SEPARATOR = ',"body":';
const BODY_SEPARATOR_BYTES = Buffer.from(BODY_SEPARATOR);

/**
 * Every op type a journal line may carry. A `Record` over the `Op` union, so that adding an op to
 * the union without listing it here is a compile error: a hand-written list once lacked `renew`,
 * and every store that had renewed a lease refused to open.
 */
const OP_TYPES: Record<Op['t'], true> = {
  event: true,
  dead: true,
  enqueue: true,
  claim: true,
  renew: true,
  complete: true,
  fail: true,
  retry: true,
  resource: true,
  attempt: true,
  attemptDone: true,
  attemptRefused: true,
  lock: true,
  unlock: true,
  prune: true,
  activity: true,
};

const isOpType = (t: unknown): t is Op['t'] => typeof t === 'string' && Object.hasOwn(OP_TYPES, t);

/** An op as a journal line, and the op to apply to the state (event bodies referenced, not held). */
export interface EncodedOp {
  line: string;
  bytes: number;
  /**
   * What the line decodes to, so that this process's state is exactly what any other process
   * (or a restart) builds by replaying the line: no Dates or undefined that JSON would change.
   */
  applied: Op;
}

/** Encode `op` as the line that will start at byte `offset` of journal segment `gen`. */
export function encodeOp(op: Op, gen: number, offset: number): EncodedOp {
  if (!Number.isFinite(op.at)) throw new RangeError(`Invalid time for a ${op.t} operation: ${op.at} (an invalid Date?)`);
  // What a replay could not read back as written: refused before anything reaches the file (a line
  // with no text id is damage that stops the store opening; another body would be lost on restart).
  if (op.t === 'event' && typeof op.event.id !== 'string') throw new TypeError(`An event's id must be text, got ${typeof op.event.id}.`);
  if (op.t === 'event' && op.event.body !== undefined && typeof op.event.body !== 'string') throw new TypeError(`Event ${op.event.id}: its body must be text (the raw delivery) or undefined, got ${op.event.body === null ? 'null' : typeof op.event.body}.`);
  if (op.t !== 'event' || op.event.body === undefined) {
    const json = JSON.stringify(op);
    return { line: `${json}\n`, bytes: Buffer.byteLength(json) + 1, applied: JSON.parse(json) as Op };
  }
  const { body, bodyRef: _bodyRef, ...meta } = op.event as EventRecord;
  const metaJson = JSON.stringify(meta);
  const head = `{"t":"event","at":${JSON.stringify(op.at)},"event":${metaJson}${BODY_SEPARATOR}`;
  const literal = JSON.stringify(body);
  const headBytes = Buffer.byteLength(head);
  const literalBytes = Buffer.byteLength(literal);
  const bodyRef = { seg: gen, off: offset + headBytes, len: literalBytes };
  // What a replay of the line applies. Built from `meta` when that is the same thing (see `isPlainMeta`).
  const event: EventRecord = isPlainMeta(meta)
    ? ({ id: meta.id, type: meta.type, environment: meta.environment, createdAt: meta.createdAt, receivedAt: meta.receivedAt, resourceKind: meta.resourceKind, resourceId: meta.resourceId, body: undefined, bodyRef } satisfies Required<EventRecord>)
    : { ...(JSON.parse(metaJson) as EventRecord), body: undefined, bodyRef };
  return { line: `${head}${literal}}\n`, bytes: headBytes + literalBytes + 2, applied: { t: 'event', at: op.at, event } };
}

/**
 * An event's fields but its body: a `Record` over them, so that a field added to `StoredEvent` must
 * be named here (and in `encodeOp`'s literal, which `satisfies Required<EventRecord>`).
 */
const META_FIELDS: Record<Exclude<keyof EventRecord, 'body' | 'bodyRef'>, true> = {
  id: true,
  type: true,
  environment: true,
  createdAt: true,
  receivedAt: true,
  resourceKind: true,
  resourceId: true,
};

const isText = (value: unknown): boolean => value === undefined || typeof value === 'string';

/**
 * Whether `meta` parses back from its JSON field for field (a missing key and an undefined one read
 * the same): only its own fields, each text or undefined. Then the event to apply is built from it,
 * every field named in one literal, rather than parsed from the JSON just written: in `serve` under
 * a slow handler's backlog (500 events/s, the README's benchmarks) the parsed copies made V8's old
 * generation grow 33 MB a minute instead of 16–18, and RSS 17–19% over the half minute instead of
 * 11–13% (a key-by-key copy did no better than parsing). Anything else goes through JSON, as a
 * replay of the line will.
 */
function isPlainMeta(meta: Omit<EventRecord, 'body' | 'bodyRef'>): boolean {
  for (const key in meta) if (!Object.hasOwn(META_FIELDS, key) || !isText(meta[key as keyof typeof META_FIELDS])) return false;
  return true;
}

/**
 * The last line of a segment that compaction closed: the ops go on in segment `next` (= gen + 1).
 * Not an op (the state never sees it); readers follow it to the next segment, so the snapshot can
 * be written after the lock is released while writers append to the next segment.
 */
export interface Seal {
  t: 'seal';
  next: number;
}

/** Why a line that follows a seal is damage: nothing is appended to a sealed segment. */
export const AFTER_SEAL = 'a line after the seal that closed the segment';

/** The seal line that closes segment `gen`. */
export function encodeSeal(gen: number): string {
  return `${JSON.stringify({ t: 'seal', next: gen + 1 } satisfies Seal)}\n`;
}

/** What `decodeJournal` found in a chunk of a journal segment. */
export interface DecodedChunk {
  ops: Op[];
  /** Bytes of complete lines (each ends with `\n`), the seal line included. */
  bytes: number;
  /** Bytes after the last `\n`: a line whose append never finished. */
  tornBytes: number;
  /** The chunk ends with the segment's seal line: read on in segment gen + 1. */
  sealed: boolean;
}

/** A complete line that is not a journal op: the file was damaged, not merely cut short. */
export class CorruptLineError extends Error {
  constructor(
    readonly offset: number,
    readonly reason: string,
  ) {
    super(reason);
  }
}

/**
 * Decode the complete lines of `chunk`, which starts at byte `base` of journal segment `gen`.
 * Event bodies become `BodyRef`s into the segment. Throws `CorruptLineError` for a damaged line,
 * and for any line after a seal (nothing is appended to a sealed segment).
 */
export function decodeJournal(chunk: Buffer, base: number, gen: number): DecodedChunk {
  const ops: Op[] = [];
  let sealed = false;
  let start = 0;
  for (let end = chunk.indexOf(10, start); end !== -1; end = chunk.indexOf(10, start)) {
    if (sealed) throw new CorruptLineError(base + start, AFTER_SEAL);
    const line = decodeLine(chunk, start, end, base, gen);
    if (line.t === 'seal') {
      if (line.next !== gen + 1) throw new CorruptLineError(base + start, `a seal naming segment ${line.next}, not ${gen + 1}`);
      sealed = true;
    } else ops.push(line);
    start = end + 1;
  }
  return { ops, bytes: start, tornBytes: chunk.length - start, sealed };
}

function decodeLine(chunk: Buffer, start: number, end: number, base: number, gen: number): Op | Seal {
  let parsed: unknown;
  try {
    parsed = JSON.parse(chunk.toString('utf8', start, end));
  } catch (error) {
    throw new CorruptLineError(base + start, `not JSON (${(error as Error).message})`);
  }
  if (typeof parsed !== 'object' || parsed === null) throw new CorruptLineError(base + start, 'not an object');
  const op = parsed as Record<string, unknown>;
  if (op.t === 'seal' && Number.isSafeInteger(op.next)) return op as unknown as Seal;
  if (!isOpType(op.t) || typeof op.at !== 'number') {
    throw new CorruptLineError(base + start, `not a journal op (t=${JSON.stringify(op.t)})`);
  }
  if (op.t !== 'event') return op as Op;
  const event = op.event as EventRecord | undefined;
  if (typeof event !== 'object' || event === null || typeof event.id !== 'string') throw new CorruptLineError(base + start, 'event without an id');
  if (typeof op.body !== 'string') return { t: 'event', at: op.at, event };
  const separator = chunk.lastIndexOf(BODY_SEPARATOR_BYTES, end);
  const off = separator + BODY_SEPARATOR_BYTES.length;
  if (separator < start || chunk[end - 1] !== 0x7d /* } */) throw new CorruptLineError(base + start, 'event body is not the last field');
  const record: EventRecord = { ...event, body: undefined, bodyRef: { seg: gen, off: base + off, len: end - 1 - off } };
  return { t: 'event', at: op.at, event: record };
}

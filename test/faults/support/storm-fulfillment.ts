// The fulfillment module of the faults suite's storms (CHECKOUT_HANDLERS; the CLI runs under tsx,
// so a .ts module loads). Every handler appends a `start` line before it works and an `end` line
// once it is done, one JSON line each, to the file STORM_HANDLER_LOG:
// { step, key, id, outcome, source, attempt, ms, pid, at }. So a test can count, across processes,
// kills and restarts, how often each handler key was started and completed, and by which process.
//
// How long a handler works is fixed by its key, attempt and STORM_HANDLER_SEED:
// - STORM_HANDLER_PROFILE=storm (default): a first call takes 0 to 15 s. Most take under 200 ms,
//   about 12% take 1 to 10 s, about 4% take 10 to 15 s (longer than a third of serve's 30 s dispatch
//   lease, so the event's lease is renewed while they run). A later attempt (the run was taken
//   over after its process died) takes under 200 ms: `reconcile` re-runs due runs one at a time,
//   and a storm's kills strand mostly the slow calls, so slow re-runs would only add minutes.
// - STORM_HANDLER_PROFILE=quick: 0 to 300 ms.
// - STORM_HANDLER_PROFILE=throw-first: the first attempt throws (logged as a `throw` line), so the
//   run is retried by the due-run sweep; later attempts take STORM_HANDLER_MS (default 8 s).
// With STORM_HANDLER_RELEASE set, a handler works until that file exists instead (a test then
// does what it must while the handler surely runs, and creates the file).
import { appendFileSync, existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

export type HandlerProfile = 'storm' | 'quick';

/** One line of the handler log. */
export interface HandlerLine {
  step: 'start' | 'end' | 'throw';
  key: string;
  id: string;
  outcome: string;
  source: string;
  attempt: number;
  ms: number;
  /** The process that ran the handler. */
  pid: number;
  at: number;
}

/** A number in [0, 1) from a string (FNV-1a, then a xorshift round). */
function unit(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  h ^= h << 13;
  h >>>= 0;
  h ^= h >>> 17;
  h ^= h << 5;
  return (h >>> 0) / 2 ** 32;
}

/** How long the handler for `key` works on attempt `attempt`, in ms. */
function handlerMs(key: string, attempt: number): number {
  const profile = process.env.STORM_HANDLER_PROFILE ?? 'storm';
  const seed = process.env.STORM_HANDLER_SEED ?? '0';
  const u = unit(`${seed}:${key}`);
  const v = unit(`${key}:${seed}:v`);
  if (profile === 'quick') return Math.floor(v * 300);
  if (profile === 'throw-first') return Number(process.env.STORM_HANDLER_MS ?? 8_000);
  if (attempt > 1) return Math.floor(v * 200);
  if (u < 0.04) return 10_000 + Math.floor(v * 5_000);
  if (u < 0.16) return 1_000 + Math.floor(v * 9_000);
  return Math.floor(v * 200);
}

function log(entry: Omit<HandlerLine, 'pid' | 'at'>): void {
  const file = process.env.STORM_HANDLER_LOG;
  if (!file) throw new Error('storm-fulfillment.ts needs STORM_HANDLER_LOG (the file its start and end lines go to)');
  appendFileSync(file, `${JSON.stringify({ ...entry, pid: process.pid, at: Date.now() })}\n`);
}

interface Ctx {
  key: string;
  source: string;
  attempt: number;
}

function handler(outcome: string) {
  return async (resource: { id: string }, ctx: Ctx): Promise<void> => {
    const ms = handlerMs(ctx.key, ctx.attempt);
    const line = { key: ctx.key, id: resource.id, outcome, source: ctx.source, attempt: ctx.attempt, ms };
    log({ step: 'start', ...line });
    if (process.env.STORM_HANDLER_PROFILE === 'throw-first' && ctx.attempt === 1) {
      log({ step: 'throw', ...line });
      throw new Error('the first attempt fails (STORM_HANDLER_PROFILE=throw-first)');
    }
    const release = process.env.STORM_HANDLER_RELEASE;
    if (release) while (!existsSync(release)) await sleep(50);
    else await sleep(ms);
    log({ step: 'end', ...line });
  };
}

export default {
  paid: handler('paid'),
  overpaid: handler('overpaid'),
  underpaid: handler('underpaid'),
  expired: handler('expired'),
};

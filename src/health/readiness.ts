import { hostname } from 'node:os';
import type { Store } from '../store/index.js';

/** The store to probe, the clock, and how old a dispatch backlog may grow. */
export interface HealthOptions {
  store: Store;
  /** The clock of the backlog's age and the probe's lease (the engine's). @default () => new Date() */
  clock?: () => Date;
  /** Not ready while the oldest undispatched event is older than this. @default 600000 (10 minutes) */
  maxBacklogAgeMs?: number;
  /** A write probe's answer is reused this long, so frequent probes cost one write. @default 10000 */
  probeCacheMs?: number;
  /** Owner of the probe's lock. @default `health:<hostname>:<pid>` */
  owner?: string;
}

/** Readiness's check of the store: writable and caught up. */
export interface StoreCheck {
  ok: boolean;
  /** A write reached the store (a short lock taken and released). */
  writable: boolean;
  /** A read brought this process up to what the store holds (the embedded store replays other processes' journal lines). */
  caughtUp: boolean;
  error?: string | undefined;
}

/** Readiness's check of the dispatch backlog: how many events wait and for how long. */
export interface BacklogCheck {
  ok: boolean;
  pending: number;
  oldestAgeSeconds: number;
  limitSeconds: number;
}

/** `GET /readyz`'s answer: `reasons` says in words why it is not ready (empty when it is). */
export interface Readiness {
  ready: boolean;
  checks: { store: StoreCheck; backlog: BacklogCheck | undefined };
  reasons: string[];
}

/** A process's readiness checks, for `/readyz` and the alerts. */
export interface Health {
  /** Store writable and caught up, dispatch backlog younger than `maxBacklogAgeMs`. */
  ready(): Promise<Readiness>;
  /** The write probe alone (cached): what the store-unwritable alert asks. */
  probeWrite(): Promise<{ ok: boolean; error?: string | undefined }>;
}

const PROBE_LOCK = 'health-probe';

/**
 * Liveness is the process answering; readiness is whether it can do its work: the store takes
 * writes and can be read up to date, and dispatch is keeping up.
 * @example
 * const health = createHealth({ store, clock: engine.clock, maxBacklogAgeMs: 120_000 });
 * const { ready, reasons } = await health.ready();
 */
export function createHealth(options: HealthOptions): Health {
  const clock = options.clock ?? (() => new Date());
  const limitMs = options.maxBacklogAgeMs ?? 600_000;
  const cacheMs = options.probeCacheMs ?? 10_000;
  const owner = options.owner ?? `health:${hostname()}:${process.pid}`;
  // Monotonic: an injected clock may stand still.
  let probed: { answer: { ok: boolean; error?: string | undefined }; until: number } | undefined;
  let probing: Promise<{ ok: boolean; error?: string | undefined }> | undefined;

  async function write(): Promise<{ ok: boolean; error?: string | undefined }> {
    try {
      // A lock held for a millisecond: one small durable write and its release, whatever the store.
      await options.store.acquireLock(PROBE_LOCK, owner, 1, clock());
      await options.store.releaseLock(PROBE_LOCK, owner, clock());
      return { ok: true };
    } catch (error) {
      return { ok: false, error: (error as Error).message };
    }
  }

  function probeWrite(): Promise<{ ok: boolean; error?: string | undefined }> {
    if (probed && performance.now() < probed.until) return Promise.resolve(probed.answer);
    probing ??= write()
      .then((answer) => {
        probed = { answer, until: performance.now() + cacheMs };
        return answer;
      })
      .finally(() => (probing = undefined));
    return probing;
  }

  return {
    probeWrite,
    async ready() {
      const reasons: string[] = [];
      const writable = await probeWrite();
      let backlog: BacklogCheck | undefined;
      let readError: string | undefined;
      try {
        const now = clock();
        const { dispatch } = await options.store.summarize({ now });
        const ageMs = dispatch.oldestQueuedAt === undefined ? 0 : Math.max(0, now.getTime() - Date.parse(dispatch.oldestQueuedAt));
        backlog = {
          ok: ageMs <= limitMs,
          pending: dispatch.pending + dispatch.running,
          oldestAgeSeconds: Math.round(ageMs / 1000),
          limitSeconds: Math.round(limitMs / 1000),
        };
        if (!backlog.ok) {
          reasons.push(
            `the oldest of ${backlog.pending} undispatched event(s) has waited ${backlog.oldestAgeSeconds} s (limit ${backlog.limitSeconds} s): dispatch is not keeping up or not running; see the console's overview or \`checkout-kit events list --status pending\``,
          );
        }
      } catch (error) {
        readError = (error as Error).message;
      }
      if (!writable.ok) reasons.push(`the store does not take writes: ${writable.error ?? 'unknown error'}`);
      if (readError !== undefined) reasons.push(`the store cannot be read up to date: ${readError}`);
      const store: StoreCheck = {
        ok: writable.ok && readError === undefined,
        writable: writable.ok,
        caughtUp: readError === undefined,
        error: writable.error ?? readError,
      };
      return { ready: reasons.length === 0, checks: { store, backlog }, reasons };
    },
  };
}

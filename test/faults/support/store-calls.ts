// Preloaded into a CLI process by the every-write scenario (`node --import tsx --import this`):
// records each call of the Store methods named in STORE_CALLS_METHODS (comma-separated) made on
// any SqlStore of the process, once it has settled, as one JSON line in STORE_CALLS_LOG. The call
// itself is the store's own, unchanged: this only says which writes the real processes made.
// STORE_CALLS_HOLD_LOCK_MS delays the caller after a lock it took (the call itself is unchanged).
import { appendFileSync } from 'node:fs';
import { SqlStore } from '../../../src/store/sql/sql-store.js';
import type { Store } from '../../../src/store/index.js';

/** One line of STORE_CALLS_LOG. */
export interface StoreCall {
  method: keyof Store;
  pid: number;
  /** Resolved (committed), or rejected with `error`. */
  ok: boolean;
  error?: string;
  /** The call's first argument when it names something (a run key, an order id, a lock). */
  subject?: string;
  /** What it resolved with, when that is a boolean (a lock taken or not, a lease renewed or lost). */
  value?: boolean;
}

const file = process.env.STORE_CALLS_LOG;
const methods = (process.env.STORE_CALLS_METHODS ?? '').split(',').filter(Boolean) as Array<keyof Store>;
const holdLockMs = Number(process.env.STORE_CALLS_HOLD_LOCK_MS ?? 0);
const prototype = SqlStore.prototype as unknown as Record<string, (...args: unknown[]) => unknown>;

if (file) {
  for (const method of methods) {
    const original = prototype[method];
    if (typeof original !== 'function') throw new Error(`store-calls: SqlStore has no method ${method}`);
    prototype[method] = function recorded(this: unknown, ...args: unknown[]) {
      const subject = typeof args[0] === 'string' ? args[0] : undefined;
      const write = (entry: Omit<StoreCall, 'method' | 'pid' | 'subject'>) =>
        appendFileSync(file, `${JSON.stringify({ method, pid: process.pid, subject, ...entry } satisfies StoreCall)}\n`);
      const result = original.apply(this, args) as Promise<unknown>;
      result.then(
        (value) => write({ ok: true, ...(typeof value === 'boolean' ? { value } : {}) }),
        (error: unknown) => write({ ok: false, error: String((error as Error)?.message ?? error).slice(0, 300) }),
      );
      // STORE_CALLS_HOLD_LOCK_MS: the caller goes on only that long after taking a lock (a slow pass).
      if (method === 'acquireLock' && holdLockMs > 0)
        return result.then(async (value) => {
          if (value === true) await new Promise((resolve) => setTimeout(resolve, holdLockMs));
          return value;
        });
      return result;
    };
  }
}

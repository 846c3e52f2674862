import type { Op } from './state.js';
import { StateStore } from './state-store.js';

/** A store that lives in memory only: for tests and throwaway runs. Nothing survives the process. */
export class MemoryStore extends StateStore {
  readonly description = 'memory (nothing is kept after exit)';
  async open(): Promise<void> {}
  async close(): Promise<void> {}
  protected async commit<T>(op: Op): Promise<T> {
    return this.state.apply(op).value as T;
  }
}

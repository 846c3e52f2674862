import { SqliteStore } from './sqlite/sqlite-store.js';

/** A store that lives in memory only (SQLite in memory): for tests and throwaway runs. Nothing survives the process. */
export class MemoryStore extends SqliteStore {
  constructor() {
    super();
  }
}

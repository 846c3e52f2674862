import { afterEach } from 'vitest';
import { SqliteStore } from '../../src/store/index.js';
import { removeTempDirs, tempDir } from '../support/temp-dirs.js';
import { storeContract } from './contract.js';

afterEach(() => removeTempDirs());

storeContract('SqliteStore (file)', async () => {
  const store = new SqliteStore({ dir: await tempDir() });
  await store.open();
  return { store, cleanup: () => store.close() };
});

storeContract('SqliteStore (memory)', async () => {
  const store = new SqliteStore();
  await store.open();
  return { store, cleanup: () => store.close() };
});

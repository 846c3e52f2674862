import { MemoryStore } from '../../src/store/index.js';
import { storeContract } from './contract.js';

storeContract('MemoryStore', async () => {
  const store = new MemoryStore();
  await store.open();
  return { store, cleanup: () => store.close() };
});

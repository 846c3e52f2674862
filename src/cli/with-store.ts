import { readVariables, registerSecrets, storeOf } from '../config/environment.js';
import { openStore } from '../store/open.js';
import type { Store } from '../store/index.js';
import type { CliIO } from './io.js';

/**
 * Open the configured store for one piece of work, then close it: for the commands that read or
 * act on what is stored (`events`, `payments`, `invoices`, `runs`, `retry`). A store that does not
 * exist is refused (exit 2), never created: a mistyped CHECKOUT_STORE must not look like an empty shop.
 * Its own module, apart from `runtime.ts`: these commands read only CHECKOUT_STORE (and register the
 * configured secrets, so nothing they print shows one), not the whole configuration, the client, the
 * engine or the metrics, so they load only the store and its driver.
 */
export async function withStore<T>(io: CliIO, work: (store: Store) => Promise<T>, { create = false }: { create?: boolean } = {}): Promise<T> {
  const variables = readVariables({ env: io.env, cwd: io.cwd });
  registerSecrets(variables);
  // `create`: a command that writes what it was asked to (`merchants onboard`) opens it as serve does.
  const store = await openStore(storeOf(variables), { cwd: io.cwd, mustExist: !create });
  try {
    return await work(store);
  } finally {
    await store.close();
  }
}

// What a started receiver does every hour (`retention`), run once in its own process on the store
// of CHECKOUT_STORE with its clock STORE_PRUNE_AHEAD_MS ahead: serve prunes only hourly, too slow
// for a test, and no CLI command prunes. Prints the receiver's answer as one JSON line.
import { openStore } from '../../../src/store/open.js';
import { createReceiver } from '../../../src/webhooks/index.js';

const store = await openStore(process.env.CHECKOUT_STORE ?? '');
try {
  const receiver = createReceiver({ store, secrets: process.env.CHECKOUT_WEBHOOK_SECRET ?? '', dispatch: false });
  const now = new Date(Date.now() + Number(process.env.STORE_PRUNE_AHEAD_MS ?? 0));
  console.log(JSON.stringify(await receiver.prune(now)));
} finally {
  await store.close();
}

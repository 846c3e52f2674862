/**
 * The shop's checkout-kit setup, as a Next.js app keeps it in a module of its own: route modules
 * may only export route handlers and segment options. One receiver per server process.
 */
import { createWebReceiver } from '../../../../../src/web/index.js';
import { captureLogger, SECRET } from '../../../helpers.js';
import { clock, CountingStore, countingReceiver } from '../../../receive/delivery-flow.js';

/** Node.js runtime (Next's default): the full receiver, which also dispatches handlers. */
export const node = countingReceiver();

/** Edge runtime: no Node built-ins, so the WebCrypto receiver over any store. */
export const edgeStore = new CountingStore();
export const edgeReceiver = createWebReceiver({ store: edgeStore, secrets: SECRET, clock, logger: captureLogger() });

// app/webhooks/checkout/route.ts: the App Router route handler a merchant writes.
import { createWebHandler } from '../../../../../../../src/webhooks/index.js';
import { node } from '../../../lib/checkout.js';

export const runtime = 'nodejs';
export const POST = createWebHandler(node.receiver);

// app/edge/webhooks/checkout/route.ts: the same route on the edge runtime, from checkout-kit/web.
import { createWebHandler } from '../../../../../../../../src/web/index.js';
import { edgeReceiver } from '../../../../lib/checkout.js';

export const runtime = 'edge';
export const POST = createWebHandler(edgeReceiver);

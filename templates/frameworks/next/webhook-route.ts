/**
 * POST /webhooks/checkout as a Next.js App Router route handler: verify the raw bytes, store the
 * event once, then let the fulfillment engine (../../../src/shop.ts) decide. The handler receives the
 * untouched Request: never call request.json() or request.text() before it.
 */
import { createWebHandler } from 'checkout-kit';
// No .js: Next.js's bundler (create-next-app's tsconfig, moduleResolution bundler) does not map it to shop.ts.
import { sharedShop } from '../../../src/shop';

// The store and the engine use Node (files, sockets). For the edge runtime, see checkout-kit/web.
export const runtime = 'nodejs';

let webhook: Promise<(request: Request) => Promise<Response>> | undefined;

export async function POST(request: Request): Promise<Response> {
  webhook ??= sharedShop().then((shop) => createWebHandler(shop.receiver));
  return (await webhook)(request);
}

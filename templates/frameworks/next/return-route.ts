/** GET /checkout/return?orderId=…: confirm the order with the service and show (or answer, as JSON) its state. */
import { handleReturnRequest } from 'checkout-kit';
// No .js: Next.js's bundler (create-next-app's tsconfig, moduleResolution bundler) does not map it to shop.ts.
import { sharedShop, toResponse, wantsJson } from '../../../src/shop';

export const runtime = 'nodejs';

export async function GET(request: Request): Promise<Response> {
  const { checkout } = await sharedShop();
  if (!checkout) return Response.json({ error: { code: 'not_configured', message: 'Set CHECKOUT_BASE_URL and the API keys in .env.' } }, { status: 503 });
  const query = Object.fromEntries(new URL(request.url).searchParams);
  return toResponse(await handleReturnRequest(checkout, query, wantsJson(request.headers.get('accept'), query.format)));
}

/** GET /checkout/return?orderId=…: confirm the order with the service and show (or answer, as JSON) its state. */
import { handleReturnRequest } from 'checkout-kit';
import { sharedShop, toResponse, wantsJson } from '../../../src/shop.js';

export const runtime = 'nodejs';

export async function GET(request: Request): Promise<Response> {
  const { checkout } = await sharedShop();
  if (!checkout) return Response.json({ error: { code: 'not_configured', message: 'Set CHECKOUT_BASE_URL and the API keys in .env.' } }, { status: 503 });
  const query = Object.fromEntries(new URL(request.url).searchParams);
  return toResponse(await handleReturnRequest(checkout, query, wantsJson(request.headers.get('accept'), query.format)));
}

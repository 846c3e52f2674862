/** POST /checkout (JSON or form: orderId, amount, email…) → 303 to the service's checkoutUrl. */
import { handleCheckoutRequest } from 'checkout-kit';
// No .js: Next.js's bundler (create-next-app's tsconfig, moduleResolution bundler) does not map it to shop.ts.
import { sharedShop, toResponse } from '../../src/shop';

export const runtime = 'nodejs';

export async function POST(request: Request): Promise<Response> {
  const { checkout } = await sharedShop();
  if (!checkout) return Response.json({ error: { code: 'not_configured', message: 'Set CHECKOUT_BASE_URL and the API keys in .env.' } }, { status: 503 });
  const body = (request.headers.get('content-type') ?? '').includes('application/json')
    ? await request.json()
    : Object.fromEntries((await request.formData()).entries());
  return toResponse(await handleCheckoutRequest(checkout, body));
}

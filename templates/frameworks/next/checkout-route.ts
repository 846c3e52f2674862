/** POST /checkout (JSON or form: orderId, amount, email…) → 303 to the service's checkoutUrl. */
// No .js: Next.js's bundler (create-next-app's tsconfig, moduleResolution bundler) does not map it to shop.ts.
import { checkoutResponse, sharedShop } from '../../src/shop';

export const runtime = 'nodejs';

export async function POST(request: Request): Promise<Response> {
  const { checkout } = await sharedShop();
  if (!checkout) return Response.json({ error: { code: 'not_configured', message: 'Set CHECKOUT_BASE_URL and the API keys in .env.' } }, { status: 503 });
  return checkoutResponse(checkout, request);
}

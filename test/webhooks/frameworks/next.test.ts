import { describe, expect, it } from 'vitest';
import { expectDeliveryFlow, storedIn, type Answer } from '../receive/delivery-flow.js';
import * as edgeRoute from './next-app/app/edge/webhooks/checkout/route.js';
import * as nodeRoute from './next-app/app/webhooks/checkout/route.js';
import { edgeStore, node } from './next-app/lib/checkout.js';

/** What Next.js does with an App Router route module: call its POST with the Request and a context, read the Response. */
type RouteModule = { POST: (request: Request, context: { params: Promise<Record<string, string>> }) => Promise<Response> };

function sendTo(route: RouteModule, path: string) {
  return async (body: string, headers: Record<string, string>): Promise<Answer> => {
    const request = new Request(`http://localhost:3000${path}`, { method: 'POST', headers, body });
    const response = await route.POST(request, { params: Promise.resolve({}) });
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    return { status: response.status, body: (await response.json()) as unknown };
  };
}

describe('Next.js App Router route handlers (POST called with a real Request)', () => {
  it('nodejs runtime: stores a signed multibyte delivery once, acknowledges the duplicate, refuses a tampered copy', async () => {
    expect(nodeRoute.runtime).toBe('nodejs');
    await expectDeliveryFlow({ send: sendTo(nodeRoute, '/webhooks/checkout'), stored: storedIn(node.store) });
    await node.receiver.idle();
    expect(node.dispatched).toEqual(['evt_multibyte_1']);
  });

  it('edge runtime, through checkout-kit/web: the same, verified on WebCrypto', async () => {
    expect(edgeRoute.runtime).toBe('edge');
    await expectDeliveryFlow({ send: sendTo(edgeRoute, '/edge/webhooks/checkout'), stored: storedIn(edgeStore) });
  });
});

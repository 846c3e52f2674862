import { afterEach, describe, expect, it } from 'vitest';
import { createCheckout } from '../../src/checkout/index.js';
import { createOnceKey, requestHash } from '../../src/domain/idempotency.js';
import { PartnerClient } from '../../src/client/index.js';
import { ApiError, InvalidRequestError } from '../../src/errors/index.js';
import { onboardMerchant } from '../../src/partner/index.js';
import type { SandboxHandle } from '../../src/sandbox/index.js';
import { MemoryStore } from '../../src/store/index.js';
import { cleanup, openSandbox, readState } from '../sandbox/helpers.js';

afterEach(cleanup);

const partnerOf = (sandbox: SandboxHandle, environment: 'test' | 'live' = 'test') =>
  new PartnerClient({ baseUrl: sandbox.url, ...sandbox.credentials[environment].partner, minRetryDelayMs: 20 });

/** The merchants the service holds for a tenant. */
const merchantsAtService = async (sandbox: SandboxHandle, tenantId: string) =>
  (await readState(sandbox)).merchants.filter((m) => (m as { externalTenantId?: string }).externalTenantId === tenantId);

async function openStore() {
  const store = new MemoryStore();
  await store.open();
  return store;
}

describe('onboardMerchant against the sandbox', () => {
  it("creates the tenant's merchant once: a second call gets the stored one, and the service holds one merchant", async () => {
    const sandbox = await openSandbox();
    const store = await openStore();
    const deps = { store, partner: partnerOf(sandbox) };
    const first = await onboardMerchant(deps, { tenantId: 'shop-1', name: 'Shop One', email: 'one@example.com' });
    expect(first).toMatchObject({
      created: true,
      tenant: { tenantId: 'shop-1', environment: 'test', status: 'created', snapshot: { externalTenantId: 'shop-1', name: 'Shop One' } },
    });
    const again = await onboardMerchant(deps, { tenantId: 'shop-1', name: 'Shop One', email: 'one@example.com' });
    expect(again).toEqual({ created: false, tenant: first.tenant });
    expect(await merchantsAtService(sandbox, 'shop-1')).toHaveLength(1);
    await store.close();
  });

  it('ten concurrent calls for one tenant: one merchant at the service, every call answered with it', async () => {
    const sandbox = await openSandbox();
    const store = await openStore();
    const results = await Promise.all(
      Array.from({ length: 10 }, () =>
        onboardMerchant({ store, partner: partnerOf(sandbox) }, { tenantId: 'shop-c', name: 'Concurrent', email: 'c@example.com' }),
      ),
    );
    expect(new Set(results.map((r) => r.tenant.merchantId)).size).toBe(1);
    expect(await merchantsAtService(sandbox, 'shop-c')).toHaveLength(1);
    await store.close();
  });

  it('a crash after the service created the merchant, before it was stored: the next call sends the same key and records that merchant', async () => {
    const sandbox = await openSandbox();
    const store = await openStore();
    const partner = partnerOf(sandbox);
    // What the crashed call left: its try stored, its create sent, the answer lost.
    const body = { externalTenantId: 'shop-k', name: 'Killed', email: 'k@example.com' };
    const idempotencyKey = createOnceKey('merchant', 'shop-k');
    await store.putTenantMerchant({
      tenantId: 'shop-k',
      environment: 'test',
      name: body.name,
      email: body.email,
      requestHash: requestHash(body),
      idempotencyKey,
    });
    const sent = await partner.merchants.create(body, { idempotencyKey });
    const { tenant } = await onboardMerchant({ store, partner }, { tenantId: 'shop-k', name: 'Killed', email: 'k@example.com' });
    expect(tenant).toMatchObject({ status: 'created', merchantId: sent.merchantId });
    expect(await merchantsAtService(sandbox, 'shop-k')).toHaveLength(1);
    await store.close();
  });

  it('other details for an onboarded tenant are refused, naming what is stored; nothing is sent', async () => {
    const sandbox = await openSandbox();
    const store = await openStore();
    const deps = { store, partner: partnerOf(sandbox) };
    await onboardMerchant(deps, { tenantId: 'shop-d', name: 'Before', email: 'd@example.com' });
    await expect(onboardMerchant(deps, { tenantId: 'shop-d', name: 'After', email: 'd@example.com' })).rejects.toThrow(
      /already onboarded .* with another name or e-mail \(Before, d@example.com\)/,
    );
    expect(await merchantsAtService(sandbox, 'shop-d')).toHaveLength(1);
    await store.close();
  });

  it('bad input is refused before anything is stored or sent', async () => {
    const sandbox = await openSandbox();
    const store = await openStore();
    const deps = { store, partner: partnerOf(sandbox) };
    await expect(onboardMerchant(deps, { tenantId: ' ', name: 'x', email: 'not an address' })).rejects.toThrow(InvalidRequestError);
    await expect(onboardMerchant(deps, { tenantId: 'x', name: 'x', email: 'x@example.com', extra: 1 } as never)).rejects.toThrow(/extra/);
    expect(await store.listTenantMerchants()).toEqual([]);
    await store.close();
  });

  it('a tenant id with spaces around it is the same tenant when onboarded and when its order is checked out', async () => {
    const sandbox = await openSandbox();
    const store = await openStore();
    const partner = partnerOf(sandbox);
    const { tenant } = await onboardMerchant({ store, partner }, { tenantId: ' shop-s ', name: 'Spaced', email: 's@example.com' });
    expect(tenant.tenantId).toBe('shop-s');
    const order = { orderId: 'o-1', amount: '5', email: 'b@example.com' };
    const spaced = await createCheckout({ store, creator: { partner } }, { ...order, tenantId: ' shop-s ' });
    const plain = await createCheckout({ store, creator: { partner } }, { ...order, tenantId: 'shop-s' });
    expect(plain).toMatchObject({ resourceId: spaced.resourceId, reused: true });
    expect(await store.getCheckoutAttempt('shop-s/o-1')).toMatchObject({ status: 'created', resourceId: spaced.resourceId });
    await store.close();
  });

  it('a refusal by the service frees the tenant: the corrected try goes out under a new key', async () => {
    const sandbox = await openSandbox();
    const store = await openStore();
    const partner = partnerOf(sandbox);
    // The service refuses a key it saw with another body: make it so for this tenant's first key.
    await partner.merchants.create(
      { externalTenantId: 'other', name: 'Other', email: 'o@example.com' },
      { idempotencyKey: createOnceKey('merchant', 'shop-r') },
    );
    const refused = await onboardMerchant({ store, partner }, { tenantId: 'shop-r', name: 'R', email: 'r@example.com' }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ApiError);
    expect(await store.getTenantMerchant('shop-r', 'test')).toMatchObject({ status: 'refused', number: 1 });
    const { tenant } = await onboardMerchant({ store, partner }, { tenantId: 'shop-r', name: 'R', email: 'r@example.com' });
    expect(tenant).toMatchObject({ number: 2, status: 'created', idempotencyKey: createOnceKey('merchant', 'shop-r', 2) });
    expect(await merchantsAtService(sandbox, 'shop-r')).toHaveLength(1);
    await store.close();
  });

  it('the live key onboards the live merchant of the same tenant, apart from the test one', async () => {
    const sandbox = await openSandbox();
    const store = await openStore();
    const test = await onboardMerchant({ store, partner: partnerOf(sandbox, 'test') }, { tenantId: 'shop-l', name: 'L', email: 'l@example.com' });
    const live = await onboardMerchant({ store, partner: partnerOf(sandbox, 'live') }, { tenantId: 'shop-l', name: 'L', email: 'l@example.com' });
    expect(live.tenant.environment).toBe('live');
    expect(live.tenant.merchantId).not.toBe(test.tenant.merchantId);
    expect((await store.listTenantMerchants()).map((t) => t.environment)).toEqual(['test', 'live']);
    await store.close();
  });
});

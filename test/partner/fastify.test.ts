import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { createOnceKey } from '../../src/domain/idempotency.js';
import { PartnerClient } from '../../src/client/index.js';
import { onboardingRoutes } from '../../src/fastify/index.js';
import type { SandboxHandle } from '../../src/sandbox/index.js';
import { MemoryStore } from '../../src/store/index.js';
import { cleanup, openSandbox } from '../sandbox/helpers.js';
import { PARTNER_OPTIONS, sampleMerchant } from '../support/fixtures.js';
import { OFF_SPEC_ANSWERS, offSpecService } from '../support/off-spec-service.js';

const apps: Array<{ close(): Promise<unknown> }> = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
  await cleanup();
});

/** A fastify app on loopback with only the onboarding route, for `partner`; its URL and store. */
async function platform(partner: PartnerClient, options: { timeoutMs?: number } = {}) {
  const store = new MemoryStore();
  await store.open();
  const app = Fastify();
  apps.push(app);
  app.addHook('onClose', () => store.close());
  await app.register(onboardingRoutes, { store, partner, ...options });
  const url = `${await app.listen({ host: '127.0.0.1', port: 0 })}/tenants`;
  const post = async (body: string | Buffer, contentType = 'application/json') => {
    const answer = await fetch(url, { method: 'POST', headers: { 'content-type': contentType }, body: typeof body === 'string' ? body : new Uint8Array(body) });
    return { status: answer.status, body: (await answer.json()) as { error?: { code: string; message: string }; merchantId?: string } };
  };
  return { store, post };
}

const partnerOf = (sandbox: SandboxHandle, options: { baseUrl?: string; apiKey?: string } = {}) =>
  new PartnerClient({ ...sandbox.credentials.test.partner, baseUrl: sandbox.url, minRetryDelayMs: 20, retries: 0, ...options });

const tenant = (tenantId: string, email = `${tenantId}@example.com`) => JSON.stringify({ tenantId, name: `Shop ${tenantId}`, email });

describe('onboardingRoutes: POST /tenants', () => {
  it('201 with the merchant when created, 200 with the same one after; bad bodies get the spec’s error object and store nothing', async () => {
    const sandbox = await openSandbox();
    const { store, post } = await platform(partnerOf(sandbox));
    const first = await post(tenant('shop-a'));
    expect(first).toMatchObject({ status: 201, body: { tenantId: 'shop-a', environment: 'test', merchantId: expect.any(String) } });
    expect(await post(tenant('shop-a'))).toEqual({ status: 200, body: first.body });

    expect(await post('{"tenantId":')).toMatchObject({ status: 400, body: { error: { code: 'invalid_request' } } });
    expect(await post(tenant('shop-b'), 'text/plain')).toMatchObject({ status: 415, body: { error: { code: 'unsupported_media_type' } } });
    expect(await post(JSON.stringify({ tenantId: 'shop-c' }))).toMatchObject({ status: 400, body: { error: { code: 'invalid_request' } } });
    // Two tenant ids that differ only in bytes that are not UTF-8 would decode to one U+FFFD: refused, not merged.
    const notUtf8 = Buffer.concat([Buffer.from('{"tenantId":"nu'), Buffer.from([0xff]), Buffer.from('","name":"x","email":"x@example.com"}')]);
    expect(await post(notUtf8)).toMatchObject({ status: 400, body: { error: { code: 'invalid_request', message: 'The request body is not valid UTF-8' } } });
    // NUL and a lone surrogate, which the store would keep as U+FFFD, likewise.
    expect(await post(tenant('nu\ud800', 'nu@example.com'))).toMatchObject({ status: 400, body: { error: { code: 'invalid_request' } } });
    expect(await post(tenant('nu\u0000', 'nu@example.com'))).toMatchObject({ status: 400, body: { error: { code: 'invalid_request' } } });
    expect((await store.listTenantMerchants()).map((stored) => stored.tenantId)).toEqual(['shop-a']);
  });

  it('the service down is a 503 and its refusals 400 or 502, never a 500, and no message names its URL or the Idempotency-Key', async () => {
    const sandbox = await openSandbox();
    const down = await platform(partnerOf(sandbox, { baseUrl: 'http://127.0.0.1:9' }));
    const unreachable = await down.post(tenant('shop-down'));
    expect(unreachable).toMatchObject({ status: 503, body: { error: { code: 'service_unreachable' } } });

    const wrongKey = await platform(partnerOf(sandbox, { apiKey: 'svc_pk_test_notarealkey0000' }));
    const rejected = await wrongKey.post(tenant('shop-key'));
    expect(rejected).toMatchObject({
      status: 502,
      body: { error: { code: 'service_rejected', message: expect.stringMatching(/^The payment service refused the request \(401 /) } },
    });

    const { post } = await platform(partnerOf(sandbox));
    const refused = await post(tenant('shop-mail', 'a@b.invalid'));
    expect(refused).toMatchObject({
      status: 400,
      body: { error: { code: 'invalid_request', message: expect.stringMatching(/^The payment service refused the merchant: /) } },
    });
    // A field too large for the service's body limit: its 413 blames the fields, not the partner's keys.
    expect(await post(tenant('shop-long', `${'a'.repeat(70_000)}@example.com`))).toEqual({
      status: 400,
      body: { error: { code: 'invalid_request', message: 'The payment service refused the merchant: The request body is larger than 65536 bytes.' } },
    });

    for (const { body } of [unreachable, rejected, refused]) {
      expect(body.error!.message).not.toMatch(/127\.0\.0\.1|localhost|Idempotency|ck-merchant/);
    }
  });

  it.each(Object.entries(OFF_SPEC_ANSWERS))(
    "%s without the spec's error object: 502 invalid_response, the tenant's try stands under its key, and the next call creates the one merchant",
    async (_what, offSpec) => {
      const service = await offSpecService();
      apps.push(service);
      const { store, post } = await platform(new PartnerClient({ ...PARTNER_OPTIONS, baseUrl: service.url, retries: 0 }));
      const key = createOnceKey('merchant', 'shop-off');

      service.offSpec = offSpec;
      for (let tries = 0; tries < 2; tries++) {
        expect(await post(tenant('shop-off'))).toEqual({
          status: 502,
          body: {
            error: {
              code: 'invalid_response',
              message: `The payment service's ${offSpec.status} answer to merchants.create does not match its spec (no error object); try the onboarding again later.`,
            },
          },
        });
        expect(await store.getTenantMerchant('shop-off', 'test')).toMatchObject({ number: 1, status: 'sending', idempotencyKey: key });
      }
      expect(service.creates.map((call) => call.idempotencyKey)).toEqual([key, key]);

      service.offSpec = undefined;
      const created = await post(tenant('shop-off'));
      expect(created).toMatchObject({ status: 201, body: { tenantId: 'shop-off', merchantId: service.merchants.get(key)?.merchantId } });
      expect(await post(tenant('shop-off'))).toEqual({ status: 200, body: created.body });
      expect(service.merchants.size).toBe(1);
      expect(await store.getTenantMerchant('shop-off', 'test')).toMatchObject({ number: 1, status: 'created', idempotencyKey: key });
    },
  );

  it("a merchant answered for another tenant is a 502 invalid_response: the tenant is not bound to it, its try stands, and the next call gets the tenant's own", async () => {
    const service = await offSpecService();
    apps.push(service);
    const { store, post } = await platform(new PartnerClient({ ...PARTNER_OPTIONS, baseUrl: service.url, retries: 0 }));
    const key = createOnceKey('merchant', 'shop-mine');

    service.answerMerchant = (merchant) => ({ ...merchant, externalTenantId: 'shop-theirs' });
    expect(await post(tenant('shop-mine'))).toEqual({
      status: 502,
      body: {
        error: {
          code: 'invalid_response',
          message:
            "The payment service answered the onboarding of tenant shop-mine with another tenant's merchant (its externalTenantId differs); nothing was recorded. Check the service before onboarding again.",
        },
      },
    });
    expect(await store.getTenantMerchant('shop-mine', 'test')).toMatchObject({ number: 1, status: 'sending', idempotencyKey: key });
    expect(await store.listTenantMerchants()).toHaveLength(1);

    service.answerMerchant = undefined;
    expect(await post(tenant('shop-mine'))).toMatchObject({ status: 201, body: { tenantId: 'shop-mine', merchantId: service.merchants.get(key)?.merchantId } });
    expect(service.merchants.size).toBe(1);
  });

  it('a merchant another tenant is already onboarded as is a 502 invalid_response, not a 500: the tenant is not bound to it and its try stands', async () => {
    const service = await offSpecService();
    apps.push(service);
    const { store, post } = await platform(new PartnerClient({ ...PARTNER_OPTIONS, baseUrl: service.url, retries: 0 }));
    const first = await post(tenant('shop-first'));
    expect(first).toMatchObject({ status: 201, body: { tenantId: 'shop-first' } });

    service.answerMerchant = (merchant) => ({ ...merchant, merchantId: first.body.merchantId! });
    expect(await post(tenant('shop-second'))).toEqual({
      status: 502,
      body: {
        error: {
          code: 'invalid_response',
          message: `The payment service answered the onboarding of tenant shop-second with merchant ${first.body.merchantId}, which tenant shop-first (test) is already onboarded as; nothing was recorded. Check the service before onboarding again.`,
        },
      },
    });
    expect(await store.getTenantMerchant('shop-second', 'test')).toMatchObject({
      number: 1,
      status: 'sending',
      idempotencyKey: createOnceKey('merchant', 'shop-second'),
    });
    expect(await store.findTenantByMerchantId(first.body.merchantId!)).toMatchObject({ tenantId: 'shop-first', status: 'created' });

    service.answerMerchant = undefined;
    const second = await post(tenant('shop-second'));
    expect(second).toMatchObject({ status: 201, body: { tenantId: 'shop-second' } });
    expect(second.body.merchantId).not.toBe(first.body.merchantId);
  });

  it("another server's page (no error object) is 502 service_rejected pointing at CHECKOUT_BASE_URL, not at the partner's keys", async () => {
    const server = createServer((_request, response) => response.writeHead(404, { 'content-type': 'text/html' }).end('<h1>Not Found</h1>'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    apps.push({ close: () => new Promise((resolve) => server.close(resolve)) });
    const { post } = await platform(
      new PartnerClient({ ...PARTNER_OPTIONS, baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, retries: 0 }),
    );
    expect(await post(tenant('shop-elsewhere'))).toEqual({
      status: 502,
      body: {
        error: {
          code: 'service_rejected',
          message:
            "The payment service's address answered 404 without the service's error object: another server may have answered (a wrong path, or a redirect to follow by hand); check CHECKOUT_BASE_URL with `checkout-kit doctor`.",
        },
      },
    });
  });

  it('a service that does not answer: 503 service_unreachable at timeoutMs, the try standing under its key; asked again, the one merchant', async () => {
    let hung = true;
    const keys: string[] = [];
    const server = createServer((request, response) => {
      let text = '';
      request.on('data', (chunk: Buffer) => (text += chunk.toString()));
      request.on('end', () => {
        keys.push(request.headers['idempotency-key'] as string);
        if (hung) return;
        response.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify(sampleMerchant(JSON.parse(text) as object)));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    apps.push({
      close: () => {
        server.closeAllConnections();
        return new Promise((resolve) => server.close(resolve));
      },
    });
    const partner = new PartnerClient({ ...PARTNER_OPTIONS, baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, retries: 0 });
    const { store, post } = await platform(partner, { timeoutMs: 200 });
    expect(await post(tenant('shop-slow'))).toEqual({
      status: 503,
      body: {
        error: {
          code: 'service_unreachable',
          message: 'The payment service did not answer in time; onboard the tenant again in a moment (it is created once).',
        },
      },
    });
    expect(await store.getTenantMerchant('shop-slow', 'test')).toMatchObject({ status: 'sending', number: 1 });
    hung = false;
    expect(await post(tenant('shop-slow'))).toMatchObject({ status: 201, body: { tenantId: 'shop-slow' } });
    expect(new Set(keys)).toEqual(new Set([createOnceKey('merchant', 'shop-slow')]));
  });
});

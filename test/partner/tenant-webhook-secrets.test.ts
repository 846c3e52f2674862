import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import Fastify from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import { saveTenantCredentials, SecretsBox, tenantWebhookSecrets } from '../../src/partner/index.js';
import { openStore } from '../../src/store/open.js';
import type { Store } from '../../src/store/index.js';
import { checkoutWebhooks, createReceiver, newWebhookSecret } from '../../src/webhooks/index.js';
import { sampleMerchant } from '../support/fixtures.js';
import { removeTempDirs, tempDir } from '../support/temp-dirs.js';
import { captureLogger, paymentEvent, SECRET, signed } from '../webhooks/helpers.js';

const closers: Array<{ close(): Promise<unknown> }> = [];
afterEach(async () => {
  for (const closer of closers.splice(0).reverse()) await closer.close();
  await removeTempDirs();
});

const newBox = () => SecretsBox.fromVariable(randomBytes(32).toString('base64'));

/** `serve`'s receiver on loopback: the configured secret, then the stored secret of the merchant a delivery names. */
async function receiverOn(store: Store, box: SecretsBox) {
  const logger = captureLogger();
  const receiver = createReceiver({ store, secrets: [SECRET], logger, dispatch: false, merchantSecrets: tenantWebhookSecrets({ store, box }) });
  const app = Fastify();
  closers.push(app);
  await app.register(checkoutWebhooks, { receiver });
  const url = `${await app.listen({ host: '127.0.0.1', port: 0 })}/webhooks/checkout`;
  return { url, logger };
}

describe("tenantWebhookSecrets: a tenant's own webhook secret at the receiver", () => {
  it('stored secrets that CHECKOUT_SECRETS_KEY cannot open: a logged 500 naming nothing of the tenant, nothing stored; with the right key the same delivery is stored', async () => {
    const store = await openStore(`file:${join(await tempDir('ck-tenant-secrets-'), 'store')}`);
    closers.push(store);
    const merchant = sampleMerchant({ externalTenantId: 'shop-secret' });
    await store.putTenantMerchant({
      tenantId: 'shop-secret',
      environment: 'test',
      name: 'Shop',
      email: 'shop@example.com',
      requestHash: 'h',
      idempotencyKey: 'k',
    });
    await store.completeTenantMerchant('shop-secret', 'test', merchant);
    const sealing = newBox();
    const webhookSecret = newWebhookSecret();
    await saveTenantCredentials({ store, box: sealing }, 'shop-secret', { webhookSecret }, { environment: 'test' });

    const event = paymentEvent();
    const delivery = signed(JSON.stringify({ ...event, data: { ...event.data, merchantId: merchant.merchantId } }), { secret: webhookSecret });
    const post = async (url: string) => {
      const response = await fetch(url, { method: 'POST', headers: delivery.headers, body: delivery.body });
      return { status: response.status, text: await response.text() };
    };

    // Another key (a rotation that dropped the old key too early).
    const wrong = await receiverOn(store, newBox());
    const refused = await post(wrong.url);
    expect(refused.status).toBe(500);
    expect(JSON.parse(refused.text)).toEqual({
      error: { code: 'internal_error', message: 'Webhook could not be verified: the receiver failed (its log says why); retry later.' },
    });
    expect(refused.text).not.toContain('shop-secret');
    expect(refused.text).not.toContain(sealing.sealingKeyId);
    expect(wrong.logger.lines).toContainEqual(
      expect.objectContaining({
        level: 'error',
        msg: expect.stringMatching(/^Webhook could not be verified: .*sealed with key .*CHECKOUT_SECRETS_KEY does not hold/),
      }),
    );
    expect(await store.getEvent(event.id)).toBeUndefined();

    const right = await receiverOn(store, sealing);
    expect((await post(right.url)).status).toBe(200);
    expect(await store.getEvent(event.id)).toBeDefined();
  });
});

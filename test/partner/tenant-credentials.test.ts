import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PartnerClient } from '../../src/client/index.js';
import { ConfigError, InvalidRequestError } from '../../src/errors/index.js';
import {
  loadTenantCredentials,
  onboardMerchant,
  rekeyTenantCredentials,
  saveTenantCredentials,
  SecretsBox,
  tenantReader,
  tenantWebhookSecrets,
} from '../../src/partner/index.js';
import type { SandboxHandle } from '../../src/sandbox/index.js';
import { openStore } from '../../src/store/open.js';
import { cleanup, openSandbox } from '../sandbox/helpers.js';
import { tempDir } from '../support/temp-dirs.js';

afterEach(cleanup);

const newKey = () => randomBytes(32).toString('base64');

/** The merchant's own keys, as the sandbox issues them (the service's dashboard would). */
async function ownKeys(sandbox: SandboxHandle, merchantId: string) {
  const response = await fetch(`${sandbox.url}/sandbox/merchants/${merchantId}/keys`, { method: 'POST' });
  expect(response.status).toBe(200);
  const keys = (await response.json()) as { apiKey: string; signingSecret: string };
  return { apiKey: keys.apiKey, signingSecret: keys.signingSecret };
}

async function platform() {
  const sandbox = await openSandbox();
  const dir = await tempDir('ck-creds-');
  const store = await openStore(`file:${join(dir, 'store')}`);
  const partner = new PartnerClient({ baseUrl: sandbox.url, ...sandbox.credentials.test.partner, minRetryDelayMs: 20 });
  const onboard = async (tenantId: string) =>
    (await onboardMerchant({ store, partner }, { tenantId, name: tenantId, email: `${tenantId}@example.com` })).tenant.merchantId!;
  return { sandbox, dir, store, partner, onboard };
}

describe("a tenant's own credentials", () => {
  it('are stored sealed (the store file never holds them in clear) and open again only with the key', async () => {
    const { sandbox, dir, store, onboard } = await platform();
    const box = SecretsBox.fromVariable(newKey());
    const keys = await ownKeys(sandbox, await onboard('shop-a'));
    expect(await saveTenantCredentials({ store, box }, 'shop-a', keys)).toBe('test');
    expect(await loadTenantCredentials({ store, box }, 'shop-a', 'test')).toEqual(keys);
    expect(await loadTenantCredentials({ store, box }, 'shop-a', 'live')).toBeUndefined();
    await store.close();
    const file = await readFile(join(dir, 'store', 'store.sqlite'));
    const wal = await readFile(join(dir, 'store', 'store.sqlite-wal')).catch(() => Buffer.alloc(0));
    for (const bytes of [file, wal]) {
      expect(bytes.includes(keys.apiKey)).toBe(false);
      expect(bytes.includes(keys.signingSecret)).toBe(false);
    }
  });

  it('a webhook secret stored after the key pair keeps the pair, and a new key pair keeps the webhook secret', async () => {
    const { sandbox, store, onboard } = await platform();
    const box = SecretsBox.fromVariable(newKey());
    const merchantId = await onboard('shop-a');
    const keys = await ownKeys(sandbox, merchantId);
    await saveTenantCredentials({ store, box }, 'shop-a', keys);
    const response = await fetch(`${sandbox.url}/sandbox/merchants/${merchantId}/webhook-secret`, { method: 'POST' });
    const { webhookSecret } = (await response.json()) as { webhookSecret: string };
    expect(await saveTenantCredentials({ store, box }, 'shop-a', { webhookSecret }, { environment: 'test' })).toBe('test');
    expect(await loadTenantCredentials({ store, box }, 'shop-a', 'test')).toEqual({ ...keys, webhookSecret });

    const rotated = await ownKeys(sandbox, merchantId);
    await saveTenantCredentials({ store, box }, 'shop-a', rotated);
    expect(await loadTenantCredentials({ store, box }, 'shop-a', 'test')).toEqual({ ...rotated, webhookSecret });
    await store.close();
  });

  it('two first saves at once, from two connections to the store (the key pair, the webhook secret), are both kept', async () => {
    const { sandbox, dir, store, onboard } = await platform();
    const box = SecretsBox.fromVariable(newKey());
    const merchantId = await onboard('shop-a');
    const keys = await ownKeys(sandbox, merchantId);
    const response = await fetch(`${sandbox.url}/sandbox/merchants/${merchantId}/webhook-secret`, { method: 'POST' });
    const { webhookSecret } = (await response.json()) as { webhookSecret: string };
    const other = await openStore(`file:${join(dir, 'store')}`);
    await Promise.all([
      saveTenantCredentials({ store, box }, 'shop-a', keys),
      saveTenantCredentials({ store: other, box }, 'shop-a', { webhookSecret }, { environment: 'test' }),
    ]);
    expect(await loadTenantCredentials({ store, box }, 'shop-a', 'test')).toEqual({ ...keys, webhookSecret });
    await other.close();
    await store.close();
  });

  it('are refused for a tenant not onboarded, in a form other than a merchant key and secret, and nothing is stored', async () => {
    const { sandbox, store, onboard } = await platform();
    const box = SecretsBox.fromVariable(newKey());
    const keys = await ownKeys(sandbox, await onboard('shop-a'));
    await expect(saveTenantCredentials({ store, box }, 'shop-x', keys)).rejects.toThrow(/Tenant shop-x is not onboarded in the test environment/);
    await expect(saveTenantCredentials({ store, box }, 'shop-a', { ...keys, extra: 1 })).rejects.toThrow(InvalidRequestError);
    await expect(saveTenantCredentials({ store, box }, 'shop-a', { apiKey: keys.signingSecret, signingSecret: keys.apiKey })).rejects.toThrow(ConfigError);
    expect(await store.listTenantCredentials()).toEqual([]);
    await store.close();
  });

  it("rekey re-seals every tenant's credentials with the new first key; after it the old key can go", async () => {
    const { sandbox, store, onboard } = await platform();
    const [oldKey, newer] = [newKey(), newKey()];
    const before = SecretsBox.fromVariable(oldKey);
    for (const tenant of ['shop-a', 'shop-b']) await saveTenantCredentials({ store, box: before }, tenant, await ownKeys(sandbox, await onboard(tenant)));
    const during = SecretsBox.fromVariable(`${newer},${oldKey}`);
    expect(await rekeyTenantCredentials({ store, box: during })).toEqual({ resealed: 2, current: 0 });
    expect(await rekeyTenantCredentials({ store, box: during })).toEqual({ resealed: 0, current: 2 });
    const after = SecretsBox.fromVariable(newer);
    expect((await loadTenantCredentials({ store, box: after }, 'shop-b', 'test'))?.apiKey).toMatch(/^svc_mk_test_/);
    await store.close();
  });

  it("the engine's reader reads a tenant's payment with the tenant's own key, and every other payment with the partner's", async () => {
    const { sandbox, store, partner, onboard } = await platform();
    const box = SecretsBox.fromVariable(newKey());
    const [a, b] = [await onboard('shop-a'), await onboard('shop-b')];
    await saveTenantCredentials({ store, box }, 'shop-a', await ownKeys(sandbox, a));
    const payA = await partner.payments.create({ merchantId: a, amount: '10.00' });
    const payB = await partner.payments.create({ merchantId: b, amount: '11.00' });
    await store.updateResource({ kind: 'payment', id: payA.id, environment: 'test', orderId: 'shop-a/1001', source: 'checkout', snapshot: payA });
    await store.updateResource({ kind: 'payment', id: payB.id, environment: 'test', orderId: 'shop-b/1001', source: 'checkout', snapshot: payB });
    const reader = tenantReader({ store, partner, box, baseUrl: sandbox.url });
    expect(await reader.payments.get(payA.id)).toMatchObject({ id: payA.id, merchantId: a });
    expect(await reader.payments.get(payB.id)).toMatchObject({ id: payB.id, merchantId: b });
    // The read of A's payment used A's stored key: with another merchant's keys stored for A, the service answers 404.
    const { apiKey, signingSecret } = sandbox.credentials.test.merchant;
    await saveTenantCredentials({ store, box }, 'shop-a', { apiKey, signingSecret });
    await expect(reader.payments.get(payA.id)).rejects.toMatchObject({ status: 404 });
    expect(await reader.payments.get(payB.id)).toMatchObject({ id: payB.id, merchantId: b });
    // Tenant A's key cannot read tenant B's payment: with A's credentials on B's row (moved by hand), the read fails.
    const sealedA = (await store.getTenantCredentials('shop-a', 'test'))!;
    await store.putTenantCredentials({ tenantId: 'shop-b', environment: 'test', sealed: sealedA.sealed, keyId: sealedA.keyId });
    await expect(tenantReader({ store, partner, box, baseUrl: sandbox.url }).payments.get(payB.id)).rejects.toThrow(/copied from another tenant/);
    await store.close();
  });
  it("a webhook secret alone is stored for the environment given, and is what the receiver's merchantSecrets answers for that tenant's merchant", async () => {
    const { sandbox, store, onboard } = await platform();
    const box = SecretsBox.fromVariable(newKey());
    const merchantA = await onboard('shop-a');
    const merchantB = await onboard('shop-b');
    const response = await fetch(`${sandbox.url}/sandbox/merchants/${merchantA}/webhook-secret`, { method: 'POST' });
    const { webhookSecret } = (await response.json()) as { webhookSecret: string };
    expect(webhookSecret).toMatch(/^whsec_/);
    // Its environment cannot be told from a webhook secret: it must be given.
    await expect(saveTenantCredentials({ store, box }, 'shop-a', { webhookSecret })).rejects.toThrow(/give --environment/);
    await expect(saveTenantCredentials({ store, box }, 'shop-a', { apiKey: 'svc_mk_test_x' })).rejects.toThrow(InvalidRequestError);
    expect(await saveTenantCredentials({ store, box }, 'shop-a', { webhookSecret }, { environment: 'test' })).toBe('test');

    const secretsOf = tenantWebhookSecrets({ store, box });
    expect(await secretsOf(merchantA)).toEqual([webhookSecret]);
    expect(await secretsOf(merchantB)).toBeUndefined();
    expect(await secretsOf('not-a-merchant')).toBeUndefined();
    await store.close();
  });
});

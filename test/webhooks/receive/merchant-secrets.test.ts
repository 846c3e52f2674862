import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../../../src/store/memory-store.js';
import { createReceiver, newWebhookSecret } from '../../../src/webhooks/index.js';
import { claimedMerchant } from '../../../src/webhooks/receive/merchant-secrets.js';
import { captureLogger, paymentEvent, SECRET, signed } from '../helpers.js';

const SECRET_A = newWebhookSecret();
const SECRET_B = newWebhookSecret();
// Merchant ids are UUIDs at the service.
const M_A = randomUUID();
const M_B = randomUUID();
const M_C = randomUUID();
const OWN: Record<string, string> = { [M_A]: SECRET_A, [M_B]: SECRET_B };

function setup() {
  const store = new MemoryStore();
  const asked: string[] = [];
  const receiver = createReceiver({
    store,
    secrets: [SECRET],
    logger: captureLogger(),
    dispatch: false,
    merchantSecrets: async (merchantId) => {
      asked.push(merchantId);
      return OWN[merchantId] === undefined ? undefined : [OWN[merchantId]];
    },
  });
  return { store, receiver, asked };
}

/** A payment event that names `merchantId`, signed with `secret`. */
function delivery(merchantId: string | undefined, secret: string, options: { timestamp?: number } = {}) {
  const event = paymentEvent();
  const body = JSON.stringify({ ...event, data: { ...event.data, ...(merchantId === undefined ? {} : { merchantId }) } });
  return { event, ...signed(body, { secret, ...options }) };
}

const codeOf = (result: { body: unknown }) => (result.body as { error?: { code: string } }).error?.code;

describe('per-merchant webhook secrets', () => {
  it("a delivery signed with a merchant's own secret and naming that merchant is stored", async () => {
    const { store, receiver } = setup();
    const { event, headers, body } = delivery(M_A, SECRET_A);
    expect((await receiver.handle({ headers, body })).status).toBe(200);
    expect(await store.getEvent(event.id)).toBeDefined();
  });

  it("a delivery signed with merchant A's secret that names merchant B is refused, nothing stored", async () => {
    const { store, receiver, asked } = setup();
    const { event, headers, body } = delivery(M_B, SECRET_A);
    const result = await receiver.handle({ headers, body });
    expect({ status: result.status, code: codeOf(result) }).toEqual({ status: 401, code: 'invalid_signature' });
    expect(asked).toEqual([M_B]);
    expect(await store.getEvent(event.id)).toBeUndefined();
  });

  it("a merchant's secret verifies nothing that names no merchant, or one without its own secret", async () => {
    const { receiver } = setup();
    for (const [merchantId, secret] of [
      [undefined, SECRET_A],
      [M_C, SECRET_A],
    ] as const) {
      const { headers, body } = delivery(merchantId, secret);
      expect((await receiver.handle({ headers, body })).status, String(merchantId)).toBe(401);
    }
  });

  it('the configured secret still verifies every merchant, without asking for theirs', async () => {
    const { receiver, asked } = setup();
    const { headers, body } = delivery(M_A, SECRET);
    expect((await receiver.handle({ headers, body })).status).toBe(200);
    expect(asked).toEqual([]);
  });

  it("only a bad signature is tried again with the merchant's secret: an old timestamp is refused as it is", async () => {
    const { receiver, asked } = setup();
    const { headers, body } = delivery(M_A, SECRET_A, { timestamp: Math.floor(Date.now() / 1000) - 3600 });
    expect((await receiver.handle({ headers, body })).status).toBe(401);
    expect(asked).toEqual([]);
  });

  it('claimedMerchant reads data.merchantId from the raw body, and nothing from anything else', () => {
    expect(claimedMerchant('{"data":{"merchantId":"m_a"}}')).toBe('m_a');
    expect(claimedMerchant(new TextEncoder().encode('{"data":{"merchantId":"m_b"}}'))).toBe('m_b');
    for (const body of ['', 'not json', 'null', '{"data":null}', '{"data":{"merchantId":7}}', '{"data":{"merchantId":""}}', '{"merchantId":"m_a"}'])
      expect(claimedMerchant(body), body).toBeUndefined();
  });
});

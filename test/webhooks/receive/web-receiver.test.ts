import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../../src/errors/index.js';
import type { CheckoutEvent } from '../../../src/schemas/index.js';
import { createWebHandler, createWebReceiver, signWebhook } from '../../../src/webhooks/index.js';
import { clock, CountingStore, multibyteDelivery, NOW_SECONDS } from './delivery-flow.js';
import { captureLogger, SECRET } from '../helpers.js';

function setup(options: { environment?: 'test' | 'live' } = {}) {
  const store = new CountingStore();
  const stored: CheckoutEvent[] = [];
  const receiver = createWebReceiver({ store, secrets: SECRET, clock, logger: captureLogger(), onStored: (event) => void stored.push(event), ...options });
  const handler = createWebHandler(receiver);
  const send = (body: string, headers: Record<string, string>) =>
    handler(new Request('https://shop.example/webhooks/checkout', { method: 'POST', headers, body }));
  return { store, stored, send };
}

describe('createWebReceiver', () => {
  it('without a store, or without secrets, is a ConfigError when built, not a 503 on every delivery', () => {
    expect(() => createWebReceiver({ secrets: SECRET } as never)).toThrow(ConfigError);
    expect(() => createWebReceiver({ secrets: SECRET } as never)).toThrow(/^createWebReceiver needs a store to keep each event in/);
    expect(() => createWebReceiver({ store: new CountingStore(), secrets: undefined as never })).toThrow(/No webhook secret configured/);
  });

  it('calls onStored once per new event, never for a duplicate', async () => {
    const { stored, send } = setup();
    const delivery = multibyteDelivery('evt_on_stored');
    expect((await send(delivery.body, delivery.headers)).status).toBe(200);
    expect((await send(delivery.body, delivery.headers)).status).toBe(200);
    expect(stored.map((event) => event.id)).toEqual(['evt_on_stored']);
  });

  it('refuses the other environment with 403, storing nothing', async () => {
    const { store, stored, send } = setup({ environment: 'live' });
    const delivery = multibyteDelivery('evt_test_at_live');
    const response = await send(delivery.body, delivery.headers);
    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({ error: { code: 'wrong_environment' } });
    expect(store.counted).toEqual({ stored: 0, duplicate: 0 });
    expect(stored).toEqual([]);
  });

  it('keeps a verified body that is not JSON as a dead letter in its store', async () => {
    const { store, send } = setup();
    const body = 'not json ✗';
    const headers = { 'content-type': 'application/json', ...signWebhook({ id: 'msg_bad', timestamp: NOW_SECONDS, body, secret: SECRET }) };
    const response = await send(body, headers);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: { code: 'invalid_json' } });
    expect((await store.listDeadLetters()).map((letter) => letter.body)).toEqual([body]);
  });

  it('checks its options up front', () => {
    const store = new CountingStore();
    expect(() => createWebReceiver({ store, secrets: SECRET, maxBodyBytes: 0 })).toThrow(ConfigError);
    expect(() => createWebReceiver({ store, secrets: 'whsec_' })).toThrow(/not a Standard Webhooks secret/);
  });
});

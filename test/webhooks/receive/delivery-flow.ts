import { expect } from 'vitest';
import { MemoryStore } from '../../../src/store/memory-store.js';
import type { NewEvent } from '../../../src/store/types.js';
import { createReceiver, signWebhook, type ReceiverOptions } from '../../../src/webhooks/index.js';
import { captureLogger, SECRET } from '../helpers.js';

/** The one instant of these tests: signatures and the receivers' clock agree, whatever the wall clock says. */
export const NOW = new Date('2031-05-06T07:08:09.000Z');
export const NOW_SECONDS = NOW.getTime() / 1000;
export const clock = () => NOW;

/** Text that breaks naive byte handling: emoji (astral, ZWJ sequences, flags), CJK, RTL, combining marks, U+2028. */
export const MULTIBYTE = 'Café ☕ 東京タワー 👩🏽‍💻 🇯🇵 שלום مرحبا e\u0301 \u2028 Ωμέγα — заказ №42';

/** A `payment.paid` event whose strings are multibyte, as a body with its own (non-default) spacing. */
export function multibyteDelivery(id: string, options: { secret?: string } = {}) {
  const event = {
    id,
    type: 'payment.paid',
    createdAt: '2031-05-06T07:00:00.000Z',
    environment: 'test',
    data: {
      id: '0b6f1c2e-3c51-4d0a-9d8e-0d4f6a1b2c3d',
      status: 'PAID',
      environment: 'test',
      amount: '25.00',
      amountReceived: '25.00',
      token: 'USDC',
      referenceId: `order-${MULTIBYTE}`,
      description: MULTIBYTE,
      expiresAt: '2031-05-06T08:00:00.000Z',
    },
  };
  // Spacing no serialiser of the parsed object would reproduce: only the raw bytes verify.
  const body = JSON.stringify(event, null, 1).replace('"PAID"', '"PAID" ');
  const headers = { 'content-type': 'application/json', ...signWebhook({ id: `msg_${id}`, timestamp: NOW_SECONDS, body, secret: options.secret ?? SECRET }) };
  return { event, body, headers };
}

/** The same delivery with one field changed after signing (a forged amount). */
export function tampered(delivery: { body: string }): string {
  const forged = delivery.body.replace('"amount": "25.00"', '"amount": "2.50"');
  expect(forged).not.toBe(delivery.body);
  return forged;
}

/** A real MemoryStore that counts what `insertEvent` did: first stores and duplicates. */
export class CountingStore extends MemoryStore {
  readonly counted = { stored: 0, duplicate: 0 };
  override async insertEvent(event: NewEvent, now?: Date): Promise<{ inserted: boolean }> {
    const result = await super.insertEvent(event, now);
    if (result.inserted) this.counted.stored += 1;
    else this.counted.duplicate += 1;
    return result;
  }
}

/** A Node receiver on a counting store and the fixed clock, recording which events its handler saw. */
export function countingReceiver(options: Partial<ReceiverOptions> = {}) {
  const store = new CountingStore();
  const dispatched: string[] = [];
  const receiver = createReceiver({ store, secrets: SECRET, clock, logger: captureLogger(), retention: false, ...options });
  receiver.on('payment.paid', (event) => void dispatched.push(event.id));
  return { store, receiver, dispatched };
}

export interface Answer {
  status: number;
  body: unknown;
}

/** POST a body with headers through `fetch` (to a real server) and read the JSON answer. */
export async function post(url: string, body: string, headers: Record<string, string>): Promise<Answer> {
  const response = await fetch(url, { method: 'POST', headers, body });
  const text = await response.text();
  expect(response.headers.get('content-type') ?? '', text).toMatch(/^application\/json/);
  return { status: response.status, body: JSON.parse(text) as unknown };
}

/**
 * The flow every framework and runtime must get right: a signed multibyte delivery is stored once,
 * byte for byte; the same delivery again is acknowledged as a duplicate without a second store; a
 * tampered copy is refused with 401. `send` delivers one request; `stored` reads back what was kept.
 */
export async function expectDeliveryFlow(options: {
  send: (body: string, headers: Record<string, string>) => Promise<Answer>;
  stored: () => Promise<{ bodies: Record<string, string | undefined>; inserts: { stored: number; duplicate: number } }>;
  id?: string;
}): Promise<void> {
  const id = options.id ?? 'evt_multibyte_1';
  const delivery = multibyteDelivery(id);

  const first = await options.send(delivery.body, delivery.headers);
  expect(first, JSON.stringify(first.body)).toEqual({ status: 200, body: { received: true, id, duplicate: false } });

  const again = await options.send(delivery.body, delivery.headers);
  expect(again).toEqual({ status: 200, body: { received: true, id, duplicate: true } });

  const forged = await options.send(tampered(delivery), delivery.headers);
  expect(forged.status).toBe(401);
  expect(forged.body).toMatchObject({ error: { code: 'invalid_signature', message: expect.stringContaining('raw body') } });

  const { bodies, inserts } = await options.stored();
  expect(Object.keys(bodies)).toEqual([id]);
  // Byte for byte: the multibyte text survived the framework's transport untouched.
  expect(Buffer.from(bodies[id] ?? '', 'utf8').equals(Buffer.from(delivery.body, 'utf8'))).toBe(true);
  expect(bodies[id]).toContain(MULTIBYTE);
  expect(inserts).toEqual({ stored: 1, duplicate: 1 });
}

/** `stored` for a CountingStore. */
export function storedIn(store: CountingStore) {
  return async () => {
    const events = await store.listEvents();
    return { bodies: Object.fromEntries(events.map((event) => [event.id, event.body])), inserts: { ...store.counted } };
  };
}

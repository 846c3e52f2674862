import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ReplayReport } from '../../src/devtools/index.js';
import { openStore } from '../../src/store/open.js';
import type { StoredEvent } from '../../src/store/index.js';
import { runCli } from '../support/cli.js';
import { freePort } from '../support/ports.js';
import { SECRET } from '../webhooks/helpers.js';
import { removeTempDirs, startPlainReceiver, startTestReceiver, tempDir, type TestReceiver } from './helpers.js';

const OTHER_SECRET = 'whsec_b3RoZXItc2VjcmV0LW5vdC10aGUtcmVjZWl2ZXJz';
const HOUR = 3_600_000;

let cwd: string;
let receiver: TestReceiver | undefined;

/**
 * Bodies with bytes a re-serialisation would change: odd spacing, key order, escapes, non-ASCII
 * text and a trailing newline. A replay must send them exactly.
 */
function storedEvent(id: string, type: string, receivedAgoMs: number, body: string | undefined): StoredEvent {
  const receivedAt = new Date(Date.now() - receivedAgoMs).toISOString();
  return { id, type, environment: 'test', createdAt: receivedAt, receivedAt, resourceKind: 'payment', resourceId: `pay-${id}`, body };
}
const BODIES = {
  evt_old: '{"type":"payment.created",  "id":"evt_old","data":{"amount":"25.00","note":"caf\\u00e9"}}',
  evt_mid: '{\n  "id": "evt_mid",\n  "type": "payment.paid",\n  "data": { "amount": "25.00", "memo": "über ✓ 支付" }\n}\n',
  evt_new: '{"id":"evt_new","type":"payment.paid","data":{"amount":"1e2","x":[1.0,2.50]}}',
};

async function seed(): Promise<void> {
  const store = await openStore('file:.checkout-kit', { cwd });
  await store.insertEvent(storedEvent('evt_old', 'payment.created', 5 * HOUR, BODIES.evt_old));
  await store.insertEvent(storedEvent('evt_pruned', 'payment.created', 4 * HOUR, undefined));
  await store.insertEvent(storedEvent('evt_mid', 'payment.paid', 3 * HOUR, BODIES.evt_mid));
  await store.insertEvent(storedEvent('evt_new', 'payment.paid', 1 * HOUR, BODIES.evt_new));
  await store.close();
}

async function replay(args: string[], env: NodeJS.ProcessEnv = {}) {
  const result = await runCli(['replay', '--to', receiver!.url, ...args, '--json'], { cwd, env });
  return { ...result, report: result.stdout ? (JSON.parse(result.stdout) as ReplayReport) : undefined };
}

const ids = () => receiver!.deliveries.map((d) => d.headers['webhook-id']);

beforeEach(async () => {
  cwd = await tempDir();
  await seed();
});
afterEach(async () => {
  await receiver?.close();
  receiver = undefined;
  await removeTempDirs();
});

describe('replay', () => {
  it('--all resends every stored body byte for byte, oldest first, freshly signed with the stored id', async () => {
    receiver = await startTestReceiver({ secret: SECRET });
    const { code, report } = await replay(['--all', '--secret', SECRET]);
    expect(code).toBe(0);
    expect(ids()).toEqual(['evt_old', 'evt_mid', 'evt_new']);
    for (const delivery of receiver.deliveries) {
      const id = delivery.headers['webhook-id'] as keyof typeof BODIES;
      expect(delivery.body.equals(Buffer.from(BODIES[id], 'utf8'))).toBe(true);
      expect(delivery.verified, delivery.verifyError).toBe(true);
      // Stored hours ago, signed now: the timestamp is fresh, not the receive time.
      expect(Math.abs(Number(delivery.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(10);
    }
    expect(report!.results.map((r) => [r.id, r.outcome, r.status])).toEqual([
      ['evt_old', 'delivered', 204],
      ['evt_pruned', 'skipped', undefined],
      ['evt_mid', 'delivered', 204],
      ['evt_new', 'delivered', 204],
    ]);
    expect(report).toMatchObject({ delivered: 3, failed: 0, skipped: 1, missing: [] });
  });

  it('signs with the first CHECKOUT_WEBHOOK_SECRET when --secret is not given', async () => {
    receiver = await startTestReceiver({ secret: SECRET });
    const { code } = await replay(['--event', 'evt_mid'], { CHECKOUT_WEBHOOK_SECRET: `${SECRET} ${OTHER_SECRET}` });
    expect(code).toBe(0);
    expect(receiver.deliveries.map((d) => d.verified)).toEqual([true]);
  });

  it('signs in the configured CHECKOUT_WEBHOOK_SCHEME (here plain HMAC with a plain secret)', async () => {
    const scheme = { kind: 'hmac', header: 'x-signature', encoding: 'base64' } as const;
    receiver = await startTestReceiver({ secret: 'plain-shared-secret-123', scheme });
    const { code } = await replay(['--event', 'evt_mid', '--secret', 'plain-shared-secret-123'], { CHECKOUT_WEBHOOK_SCHEME: JSON.stringify(scheme) });
    expect(code).toBe(0);
    expect(receiver.deliveries.map((d) => [d.verified, Boolean(d.headers['x-signature'])])).toEqual([[true, true]]);
  });

  it('filters: --event (repeatable), --type, --since as ISO time and as a duration', async () => {
    receiver = await startTestReceiver({ secret: SECRET });
    expect((await replay(['--event', 'evt_new', '--event', 'evt_old', '--secret', SECRET])).code).toBe(0);
    expect(ids()).toEqual(['evt_new', 'evt_old']);

    receiver.deliveries.length = 0;
    expect((await replay(['--type', 'payment.paid', '--secret', SECRET])).code).toBe(0);
    expect(ids()).toEqual(['evt_mid', 'evt_new']);

    receiver.deliveries.length = 0;
    const since = new Date(Date.now() - 2 * HOUR).toISOString();
    expect((await replay(['--since', since, '--secret', SECRET])).code).toBe(0);
    expect(ids()).toEqual(['evt_new']);

    receiver.deliveries.length = 0;
    const { report } = await replay(['--since', '270m', '--type', 'payment.created', '--secret', SECRET]);
    // Within 4.5 h: evt_pruned (4 h, skipped), not evt_old (5 h).
    expect(report!.results.map((r) => [r.id, r.outcome])).toEqual([['evt_pruned', 'skipped']]);
    expect(receiver.deliveries).toHaveLength(0);
  });

  it('exits 1 when the receiver refuses a delivery, and reports its status', async () => {
    receiver = await startTestReceiver({ secret: SECRET, status: (id) => (id === 'evt_mid' ? 500 : 200) });
    const { code, report } = await replay(['--type', 'payment.paid', '--secret', SECRET]);
    expect(code).toBe(1);
    expect(report!.results.map((r) => [r.id, r.outcome, r.status])).toEqual([
      ['evt_mid', 'failed', 500],
      ['evt_new', 'delivered', 200],
    ]);
  });

  it('exits 1 when signed with a secret the receiver does not hold (401)', async () => {
    receiver = await startTestReceiver({ secret: SECRET });
    const { code, report } = await replay(['--event', 'evt_old', '--secret', OTHER_SECRET]);
    expect(code).toBe(1);
    expect(report!.results[0]).toMatchObject({ outcome: 'failed', status: 401 });
    expect(receiver.deliveries[0]!.verifyError).toMatch(/No matching signature/);
  });

  it("prints what the receiver answered: its error object's code and message, or the start of another body", async () => {
    receiver = await startTestReceiver({ secret: SECRET });
    const refused = await runCli(['replay', '--to', receiver.url, '--event', 'evt_old', '--secret', OTHER_SECRET], { cwd });
    expect(refused.code).toBe(1);
    expect(refused.stdout).toMatch(/evt_old\s+payment\.created\s+401\s+failed: answered 401: invalid_signature — .*No matching signature/);

    const page = await startPlainReceiver(502, '<html><body><h1>502 Bad Gateway</h1></body></html>');
    try {
      const result = await runCli(['replay', '--to', page.url, '--event', 'evt_old', '--secret', SECRET], { cwd });
      expect(result.code).toBe(1);
      expect(result.stdout).toContain('failed: answered 502: <html><body><h1>502 Bad Gateway</h1></body></html>');
    } finally {
      await page.close();
    }
  });

  it('exits 1 on a network error, with a readable reason', async () => {
    const port = await freePort();
    const result = await runCli(['replay', '--to', `http://127.0.0.1:${port}/hook`, '--event', 'evt_old', '--secret', SECRET], { cwd });
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/evt_old\s+payment\.created\s+-\s+failed: no answer \(ECONNREFUSED/);
  });

  it('says what to do when the receiver listens on a port fetch refuses (a "bad port" such as 6000)', async () => {
    // Nothing needs to listen there: fetch refuses before it connects.
    const result = await runCli(['replay', '--to', 'http://127.0.0.1:6000/hook', '--event', 'evt_old', '--secret', SECRET], { cwd });
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(
      /evt_old\s+payment\.created\s+-\s+failed: no answer \(fetch refuses to connect to http:\/\/127\.0\.0\.1:6000\/hook .*bad ports.*let the server listen on another port/,
    );
  });

  it('an unknown event id is a usage error (exit 2) with one clear line; the others are still sent', async () => {
    receiver = await startTestReceiver({ secret: SECRET });
    const { code, stderr, report } = await replay(['--event', 'evt_nope', '--event', 'evt_new', '--secret', SECRET]);
    expect(code).toBe(2);
    expect(stderr).toBe('checkout-kit: No event evt_nope in the store: see `checkout-kit events list`.\n');
    expect(report!.missing).toEqual(['evt_nope']);
    expect(ids()).toEqual(['evt_new']);
  });

  it('usage errors exit 2 and send nothing', async () => {
    receiver = await startTestReceiver({ secret: SECRET });
    const cases: Array<[string[], RegExp]> = [
      [['--to', receiver.url, '--secret', SECRET], /say which events to replay/],
      [['--to', 'not a url', '--all', '--secret', SECRET], /--to takes an http\(s\) URL/],
      [['--to', 'ftp://example.com/x', '--all', '--secret', SECRET], /--to takes an http\(s\) URL/],
      [['--to', receiver.url, '--all'], /no secret to sign with/],
      [['--to', receiver.url, '--all', '--secret', 'not-a-whsec'], /--secret should be a webhook secret/],
      [['--to', receiver.url, '--event', 'evt_old', '--all', '--secret', SECRET], /--event names the events itself/],
      [['--to', receiver.url, '--since', 'yesterday-ish', '--secret', SECRET], /--since takes an ISO time/],
      [['--all', '--secret', SECRET], /required option '--to <url>'/],
    ];
    for (const [args, message] of cases) {
      const result = await runCli(['replay', ...args], { cwd });
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
      expect(result.stderr).toMatch(message);
    }
    expect(receiver.deliveries).toHaveLength(0);
  });
});

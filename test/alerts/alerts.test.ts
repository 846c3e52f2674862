import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createAlertMonitor, type Alert } from '../../src/alerts/index.js';
import { silentLogger } from '../../src/log/index.js';
import { VerificationLog } from '../../src/metrics/index.js';
import { recordPass } from '../../src/reconcile/index.js';
import { MemoryStore } from '../../src/store/index.js';
import { paidPayment, storedEvent, T0, testEngine } from '../console/seed.js';

const apps: FastifyInstance[] = [];
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close();
});

/** A Slack-compatible incoming webhook on loopback, keeping what it is sent. */
async function chat(): Promise<{ url: string; posts: Array<{ text: string }> }> {
  const app = Fastify();
  apps.push(app);
  const posts: Array<{ text: string }> = [];
  app.post('/services/T000/B000/XXXX', async (request) => {
    posts.push(request.body as { text: string });
    return 'ok';
  });
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  return { url: `${address}/services/T000/B000/XXXX`, posts };
}

const CONSOLE = 'http://127.0.0.1:3000/checkout-kit';

describe('alerts', () => {
  it('an incident of 100 failing runs raises one alert, across checks and across two processes; it resolves once, and a new failure is a new incident', async () => {
    const store = new MemoryStore();
    let broken = true;
    const { engine, clock, observers } = testEngine(store, { paid: async () => (broken ? Promise.reject(new Error('warehouse API timeout')) : undefined) });
    const sink = await chat();
    const hooked: Alert[] = [];
    // The log line of a firing alert, as an operator without Slack sees it.
    const warned: Array<{ obj: object | string; msg?: string | undefined }> = [];
    const logger = { ...silentLogger, warn: (obj: object | string, msg?: string) => void warned.push({ obj, msg }) };
    const options = { store, clock, logger, url: sink.url, consoleUrl: CONSOLE, onAlert: (alert: Alert) => void hooked.push(alert), groupWaitMs: 60_000 };
    // Two serve processes sharing one store, each with its monitor.
    const first = createAlertMonitor({ ...options, owner: 'serve-a' });
    const second = createAlertMonitor({ ...options, owner: 'serve-b' });
    observers.add(first.engineObserver);

    for (let i = 0; i < 100; i++) {
      await paidPayment(store, engine, clock);
      // Checks keep coming while the incident grows (the periodic timer, the other process).
      if (i % 10 === 9) await Promise.all([first.evaluate(), second.evaluate()]);
    }
    await Promise.all([first.evaluate(), second.evaluate(), first.evaluate()]);
    expect((await store.summarize({ now: clock() })).fulfillment.failed).toBe(100);
    expect(sink.posts).toHaveLength(1);
    expect(hooked).toHaveLength(1);
    const [alert] = hooked as [Alert];
    expect(alert).toMatchObject({
      kind: 'run_failed',
      state: 'firing',
      title: expect.stringMatching(/^10 run\(s\) failed for good: 10 fulfillment handler run\(s\)/),
    });
    expect(alert.details).toContain('warehouse API timeout');
    expect(alert.next).toContain(`${CONSOLE}/runs?status=failed`);
    expect(alert.next).toContain('checkout-kit retry --all');
    expect(sink.posts[0]?.text).toContain('Next: fix the cause');
    const logged = warned.find(({ msg }) => msg?.startsWith('ALERT '));
    expect(logged?.obj).toMatchObject({ alert: 'run_failed', details: expect.stringContaining('warehouse API timeout') });

    // Fixed and retried: the incident ends once.
    broken = false;
    const retried = await store.listRuns({ status: 'failed', limit: 1000 });
    for (const run of retried) await store.retryRun(run.key, clock());
    await engine.runDue(1000);
    await Promise.all([first.evaluate(), second.evaluate()]);
    await first.evaluate();
    expect(hooked.map((a) => `${a.kind} ${a.state}`)).toEqual(['run_failed firing', 'run_failed resolved']);

    broken = true;
    await paidPayment(store, engine, clock);
    await first.evaluate();
    await second.evaluate();
    expect(hooked.map((a) => `${a.kind} ${a.state}`)).toEqual(['run_failed firing', 'run_failed resolved', 'run_failed firing']);
    expect(sink.posts).toHaveLength(3);
    expect((await store.listActivity({ subject: 'alerts' })).map((entry) => entry.data.state)).toEqual(['firing', 'resolved', 'firing']);
  });

  it('a failed run brings the next check forward: 100 failures within the group wait make one alert naming all 100', async () => {
    const store = new MemoryStore();
    const { engine, clock, observers } = testEngine(store, { paid: async () => Promise.reject(new Error('no stock')) });
    const hooked: Alert[] = [];
    const monitor = createAlertMonitor({ store, clock, onAlert: (alert) => void hooked.push(alert), groupWaitMs: 1000, checkEveryMs: 3_600_000 });
    observers.add(monitor.engineObserver);
    // The group wait on fake timers: it ends when the test says, not when a busy machine has got through some of the failures.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      await Promise.all(Array.from({ length: 100 }, () => paidPayment(store, engine, clock)));
      expect(hooked).toEqual([]);
      await vi.advanceTimersByTimeAsync(1000);
      // Waits for the check the group wait started.
      await monitor.stop();
    } finally {
      vi.useRealTimers();
    }
    expect(hooked.map((alert) => alert.title)).toEqual([expect.stringMatching(/^100 run\(s\) failed for good/)]);
  });

  it('says what to do for a stuck backlog, missed webhooks, verification failures and an unwritable store', async () => {
    const store = new MemoryStore();
    let now = T0;
    const clock = () => new Date(now);
    const hooked: Alert[] = [];
    let writable = true;
    const verification = new VerificationLog({ store, clock, instance: 'host:1', logger: silentLogger });
    const monitor = createAlertMonitor({
      store,
      clock,
      consoleUrl: CONSOLE,
      onAlert: (alert) => void hooked.push(alert),
      probeWrite: async () =>
        writable
          ? { ok: true }
          : {
              ok: false,
              error: 'The disk holding the store /srv/shop/.checkout-kit is full (ENOSPC: no space left on device): nothing was written. Free some space.',
            },
      beforeCheck: () => verification.flush(),
    });
    const fired = () => hooked.filter((alert) => alert.state === 'firing').map((alert) => alert.kind);

    await store.insertEvent(storedEvent({ id: 'evt_stuck', resourceId: 'pay_1' }), clock());
    now += 9 * 60_000;
    await monitor.evaluate();
    expect(fired()).toEqual([]);
    now += 2 * 60_000;
    await monitor.evaluate();
    expect(hooked.at(-1)).toMatchObject({
      kind: 'dispatch_backlog',
      title: expect.stringMatching(/oldest for 11 min \(limit 10 min\)/),
      next: expect.stringContaining(`${CONSOLE}/events?status=pending`),
    });

    await recordPass(
      store,
      {
        ok: true,
        checked: 5,
        missedByWebhooks: 2,
        missed: [
          { kind: 'payment', id: 'pay_9' },
          { kind: 'invoice', id: 'inv_3' },
        ],
      },
      clock(),
      silentLogger,
    );
    await monitor.evaluate();
    expect(hooked.at(-1)).toMatchObject({
      kind: 'missed_by_webhooks',
      details: expect.stringContaining('payment pay_9, invoice inv_3'),
      next: expect.stringContaining('checkout-kit doctor'),
    });

    for (let i = 0; i < 12; i++) verification.count('bad_signature');
    await monitor.evaluate();
    expect(hooked.at(-1)).toMatchObject({
      kind: 'verification_failures',
      title: expect.stringMatching(/^12 webhook deliveries failed verification .* \(bad_signature ×12\)/),
      next: expect.stringContaining('CHECKOUT_WEBHOOK_SECRET'),
    });

    writable = false;
    await monitor.evaluate();
    await monitor.evaluate();
    expect(hooked.at(-1)).toMatchObject({
      kind: 'store_unwritable',
      state: 'firing',
      details:
        'The disk holding the store /srv/shop/.checkout-kit is full (ENOSPC: no space left on device): nothing was written. Free some space. Deliveries are answered 503 (the service retries them) and nothing is fulfilled meanwhile.',
    });
    expect(fired()).toEqual(['dispatch_backlog', 'missed_by_webhooks', 'verification_failures', 'store_unwritable']);
    for (const alert of hooked) expect(alert.next, alert.kind).not.toBe('');

    // Everything clears: each incident resolves once.
    writable = true;
    await store.claimRun('event:evt_stuck', { owner: 'w', leaseMs: 1000, now: clock() });
    await store.completeRun('event:evt_stuck', 'w', clock());
    await recordPass(store, { ok: true, checked: 5, missedByWebhooks: 0 }, clock(), silentLogger);
    now += 11 * 60_000;
    await monitor.evaluate();
    await monitor.evaluate();
    expect(
      hooked
        .filter((alert) => alert.state === 'resolved')
        .map((alert) => alert.kind)
        .sort(),
    ).toEqual(['dispatch_backlog', 'missed_by_webhooks', 'store_unwritable', 'verification_failures']);
  });
});

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import type { ScenarioReport, TriggerEventReport } from '../../src/devtools/index.js';
import type { SandboxEvent, SandboxHandle } from '../../src/sandbox/index.js';
import { EVENT_TYPES, isSampleEvent } from '../../src/schemas/index.js';
import { runCli } from '../support/cli.js';
import { api, cleanup, openSandbox, tempDir as sandboxDir, waitUntil } from '../sandbox/helpers.js';
import { SECRET } from '../webhooks/helpers.js';
import { removeTempDirs, startTestReceiver, tempDir, type TestReceiver } from './helpers.js';

let sandbox: SandboxHandle;
let cwd: string;
let receiver: TestReceiver | undefined;

beforeAll(async () => {
  sandbox = await openSandbox();
  cwd = await tempDir();
});
afterEach(async () => {
  await receiver?.close();
  receiver = undefined;
});
afterAll(async () => {
  await cleanup();
  await removeTempDirs();
});

async function trigger(args: string[], env: NodeJS.ProcessEnv = {}) {
  const result = await runCli(['trigger', ...args, '--json'], { cwd, env });
  return { ...result, report: result.code === 0 || result.stdout ? (JSON.parse(result.stdout) as ScenarioReport) : undefined };
}

/** What the sandbox itself says: its events for the payment, and the payment as Get returns it. */
async function sandboxView(paymentId: string): Promise<{ types: string[]; status: string; amountReceived: string }> {
  const events = (await (await fetch(`${sandbox.url}/sandbox/events`)).json()) as SandboxEvent[];
  const { merchant } = sandbox.credentials.test;
  const payment = await api(sandbox, 'GET', `/v1/payments/${paymentId}`, { key: merchant.apiKey, secret: merchant.signingSecret });
  expect(payment.status).toBe(200);
  return { types: events.filter((e) => e.data.id === paymentId).map((e) => e.type), status: payment.body.status, amountReceived: payment.body.amountReceived };
}

describe('trigger SCENARIO against a running sandbox', () => {
  it.each([
    ['paid', 'PAID', '25.00', ['payment.created', 'payment.paid']],
    ['partial-then-paid', 'PAID', '25.00', ['payment.created', 'payment.partially_paid', 'payment.paid']],
    ['overpaid', 'OVERPAID', '30.00', ['payment.created', 'payment.overpaid']],
    ['expired', 'EXPIRED', '0', ['payment.created', 'payment.expired']],
    ['late-payment', 'PAID', '25.00', ['payment.created', 'payment.expired', 'payment.paid']],
  ])('%s leaves the payment %s with %s received and events %j', async (scenario, status, received, types) => {
    const { code, report, stderr } = await trigger([scenario, '--data', sandbox.dataDir]);
    expect(code, stderr).toBe(0);
    const view = await sandboxView(report!.paymentId);
    expect(view.status).toBe(status);
    expect(Number(view.amountReceived)).toBe(Number(received));
    expect(view.types).toEqual(types);
    expect(report).toMatchObject({ scenario, finalStatus: status, sandboxUrl: sandbox.url });
    expect(report!.sent).toBeUndefined();
    expect(report!.events.map((e) => e.type)).toEqual(types);
  });

  it('late-payment records the deposit as late (after expiresAt)', async () => {
    const { report } = await trigger(['late-payment', '--data', sandbox.dataDir]);
    const [expire, deposit] = report!.steps;
    expect(expire).toMatchObject({ action: 'expire', status: 'EXPIRED' });
    expect(deposit).toMatchObject({ action: 'deposit', amount: '25.00', status: 'PAID' });
    const state = sandbox.events().filter((e) => e.data.id === report!.paymentId);
    expect(Date.parse(String(state.at(-1)!.data.expiresAt))).toBeLessThanOrEqual(Date.parse(state.at(-1)!.createdAt));
  });

  it('duplicate-storm pays the payment, then delivers each event ≥ 20 times, identical bytes, concurrently, verifiable with the sandbox secret', async () => {
    receiver = await startTestReceiver({ secret: sandbox.credentials.webhookSecret });
    const { code, report } = await trigger(['duplicate-storm', '--data', sandbox.dataDir, '--to', receiver.url]);
    expect(code).toBe(0);
    const view = await sandboxView(report!.paymentId);
    expect(view.status).toBe('PAID');
    expect(view.types).toEqual(['payment.created', 'payment.paid']);

    const byId = new Map<string, Buffer[]>();
    for (const delivery of receiver.deliveries) {
      expect(delivery.verified, delivery.verifyError).toBe(true);
      const id = delivery.headers['webhook-id']!;
      byId.set(id, [...(byId.get(id) ?? []), delivery.body]);
    }
    expect([...byId.keys()].sort()).toEqual(report!.events.map((e) => e.id).sort());
    for (const bodies of byId.values()) {
      expect(bodies.length).toBeGreaterThanOrEqual(20);
      expect(new Set(bodies.map((b) => b.toString('base64'))).size).toBe(1);
    }
    expect(report!.sent).toMatchObject({ url: receiver.url, sent: 40, delivered: 40, failed: 0, answers: { '204': 40 } });
  });

  it("--to forwards a scenario's events once each, and exits 1 when the receiver refuses them", async () => {
    receiver = await startTestReceiver({ secret: SECRET });
    // Signed with the sandbox's secret, which this receiver does not hold: 401.
    const refused = await trigger(['paid', '--data', sandbox.dataDir, '--to', receiver.url]);
    expect(refused.code).toBe(1);
    expect(refused.report!.sent).toMatchObject({ sent: 2, delivered: 0 });
    expect(Object.entries(refused.report!.sent!.answers)).toEqual([[expect.stringMatching(/^answered 401: invalid_signature — .*No matching signature/), 2]]);
    // --secret overrides the signing secret.
    const accepted = await trigger(['paid', '--data', sandbox.dataDir, '--to', receiver.url, '--secret', SECRET]);
    expect(accepted.code).toBe(0);
    expect(accepted.report!.sent).toMatchObject({ sent: 2, delivered: 2 });
    expect(receiver.deliveries.slice(-2).map((d) => d.headers['webhook-id'])).toEqual(accepted.report!.events.map((e) => e.id));
  });

  it('--sandbox overrides the URL in credentials.json', async () => {
    const { code, report } = await trigger(['expired', '--data', sandbox.dataDir, '--sandbox', `${sandbox.url}/`]);
    expect(code).toBe(0);
    expect(report!.sandboxUrl).toBe(sandbox.url);
  });

  it('prints a readable summary without --json', async () => {
    const result = await runCli(['trigger', 'partial-then-paid', '--data', sandbox.dataDir], { cwd });
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/deposit 10\.00\s+-> PARTIALLY_PAID\n\s+deposit 15\.00\s+-> PAID/);
    expect(result.stdout).toContain('events emitted: payment.created, payment.partially_paid, payment.paid');
    expect(result.stdout).toContain('final status: PAID (received 25.00 of 25.00)');
  });
});

describe('trigger EVENT-TYPE against a running sandbox: a real payment or invoice', () => {
  it.each(EVENT_TYPES)(
    "%s creates the resource at the sandbox, drives it to that state and delivers the sandbox's own event about it to --to, once",
    async (type) => {
      receiver = await startTestReceiver({ secret: sandbox.credentials.webhookSecret });
      const result = await runCli(['trigger', type, '--data', sandbox.dataDir, '--to', receiver.url, '--json'], { cwd });
      expect(result.code, result.stderr).toBe(0);
      const report = JSON.parse(result.stdout) as TriggerEventReport;
      const named = sandbox.events().filter((event) => event.data.id === report.resourceId && event.type === type);
      expect(named).toHaveLength(1);
      expect(report.event).toEqual({ id: named[0]!.id, type });

      expect(receiver.deliveries).toHaveLength(1);
      const [delivery] = receiver.deliveries;
      expect(delivery!.verified, delivery!.verifyError).toBe(true);
      expect(delivery!.headers['webhook-id']).toBe(named[0]!.id);
      expect(JSON.parse(delivery!.body.toString('utf8'))).toMatchObject({ id: named[0]!.id, type, data: { id: report.resourceId } });
      expect(report.sent).toMatchObject({ sent: 1, delivered: 1 });

      // The resource is the sandbox's own, in the state the type announces.
      const { merchant } = sandbox.credentials.test;
      const read =
        report.kind === 'payment'
          ? await api(sandbox, 'GET', `/v1/payments/${report.resourceId}`, { key: merchant.apiKey, secret: merchant.signingSecret })
          : await api(sandbox, 'GET', `/v1/invoices/${report.resourceId}`, { key: merchant.invoiceKey });
      expect(read.status).toBe(200);
      expect(read.body.status).toBe(type.slice(report.kind.length + 1).toUpperCase());
      expect(report.finalStatus).toBe(read.body.status);
    },
  );

  it('without --to sends nothing itself: the sandbox delivers its event to its --webhook-url', async () => {
    receiver = await startTestReceiver({ secret: SECRET });
    const delivering = await openSandbox({ webhookUrls: [receiver.url] });
    const result = await runCli(['trigger', 'invoice.paid', '--data', delivering.dataDir], { cwd });
    expect(result.code, result.stderr).toBe(0);
    const [event] = delivering.events().filter((e) => e.type === 'invoice.paid');
    expect(result.stdout).toContain(`invoice.paid ${event!.id}: delivered by the sandbox to its --webhook-url(s) (add --to URL to send it elsewhere too)`);
    await waitUntil(() => receiver!.deliveries.some((d) => d.headers['webhook-id'] === event!.id), 10_000, 'the sandbox to deliver invoice.paid');
  });

  it('finds the sandbox through ./.sandbox when it answers, and sends a sample saying why when it does not', async () => {
    const shop = await tempDir();
    const running = await openSandbox({ dataDir: join(shop, '.sandbox') });
    receiver = await startTestReceiver({ secret: running.credentials.webhookSecret });
    const real = await runCli(['trigger', 'payment.paid', '--to', receiver.url, '--json'], { cwd: shop });
    expect(real.code, real.stderr).toBe(0);
    expect(JSON.parse(real.stdout)).toMatchObject({ type: 'payment.paid', sandboxUrl: running.url, finalStatus: 'PAID' });

    await running.close();
    const sample = await runCli(['trigger', 'payment.paid', '--to', receiver.url, '--json'], {
      cwd: shop,
      env: { CHECKOUT_WEBHOOK_SECRET: running.credentials.webhookSecret },
    });
    expect(sample.code, sample.stderr).toBe(0);
    expect(JSON.parse(sample.stdout)).toMatchObject({
      sample: true,
      why: `no sandbox answers at ${running.url}`,
      event: { id: expect.stringMatching(/^sample_evt_/) },
      ok: true,
    });
  });
});

describe('trigger EVENT-TYPE --to URL with no sandbox: a sample', () => {
  it.each(['payment.paid', 'payment.partially_paid', 'invoice.overpaid', 'invoice.expired'])('sends a realistic, signed %s', async (type) => {
    receiver = await startTestReceiver({ secret: SECRET });
    const result = await runCli(['trigger', type, '--to', receiver.url, '--secret', SECRET, '--json'], { cwd });
    expect(result.code, result.stderr).toBe(0);
    expect(receiver.deliveries).toHaveLength(1);
    const [delivery] = receiver.deliveries;
    expect(delivery!.verified, delivery!.verifyError).toBe(true);
    const event = JSON.parse(delivery!.body.toString('utf8'));
    expect(event).toMatchObject({ type, environment: 'test', id: delivery!.headers['webhook-id'] });
    const { amount, amountReceived, status } = event.data;
    const expected = {
      'payment.paid': ['25.00', '25.00', 'PAID'],
      'payment.partially_paid': ['25.00', '10.00', 'PARTIALLY_PAID'],
      'invoice.overpaid': ['40.00', '45.00', 'OVERPAID'],
      'invoice.expired': ['40.00', '0', 'EXPIRED'],
    }[type];
    expect([amount, amountReceived, status]).toEqual(expected);
    if (type === 'invoice.expired') expect(Date.parse(event.data.expiresAt)).toBeLessThan(Date.now());
    expect(JSON.parse(result.stdout)).toMatchObject({ sample: true, event: { id: event.id, type }, status: 204, ok: true });
    expect(event.id).toMatch(/^sample_evt_/);
    expect(isSampleEvent(event)).toBe(true);
  });

  it('uses CHECKOUT_WEBHOOK_SECRET by default and exits 1 when the receiver refuses', async () => {
    receiver = await startTestReceiver({ secret: SECRET });
    const ok = await runCli(['trigger', 'payment.paid', '--to', receiver.url], { cwd, env: { CHECKOUT_WEBHOOK_SECRET: SECRET } });
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(
      /^sent sample payment\.paid sample_evt_[0-9a-f]{32} \(payment [0-9a-f-]{36}\) to http:\/\/127\.0\.0\.1:\d+\/webhooks\/checkout: answered 204\na sample \(no sandbox credentials at \S+\/\.sandbox\/credentials\.json\): its payment exists nowhere; checkout-kit's receiver acknowledges it without a confirm read or handler\n$/,
    );
    const refused = await runCli(['trigger', 'payment.paid', '--to', receiver.url, '--secret', 'whsec_d3Jvbmctc2VjcmV0LXdyb25nLXNlY3JldA=='], { cwd });
    expect(refused.code).toBe(1);
    // What the receiver said, not only its status.
    expect(refused.stdout).toMatch(/\/webhooks\/checkout: answered 401: invalid_signature — .*No matching signature/);
  });
});

describe('trigger usage errors (exit 2)', () => {
  it.each([
    [['no-such-scenario'], /unknown scenario "no-such-scenario": use one of paid, partial-then-paid/],
    [['duplicate-storm', '--data', '<sandbox>'], /duplicate-storm re-sends the payment's events to a receiver: give its URL \(--to URL\)/],
    [['paid', '--data', 'missing-dir'], /No sandbox credentials at .*missing-dir\/credentials\.json: start the sandbox/],
    [['paid', '--data', '<sandbox>', '--to', 'nope'], /--to takes an http\(s\) URL/],
    [
      ['payment.paid'],
      /no sandbox credentials at .*\.sandbox\/credentials\.json, so trigger sends a sample payment\.paid event, which needs a receiver: add --to URL \(or start `checkout-kit sandbox` first\)/,
    ],
    [['payment.paid', '--to', 'http://127.0.0.1:9/x'], /no secret to sign with/],
  ])('%j', async (args, message) => {
    const before = sandbox.events().length;
    const result = await runCli(['trigger', ...args.map((a) => (a === '<sandbox>' ? sandbox.dataDir : a))], { cwd });
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(message);
    expect(sandbox.events()).toHaveLength(before);
  });
});

describe('trigger when the sandbox is not running', () => {
  it('exits 1 with one clear line', async () => {
    const dir = await sandboxDir();
    const stopped = await openSandbox({ dataDir: dir });
    await stopped.close();
    const result = await runCli(['trigger', 'paid', '--data', dir], { cwd });
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/^checkout-kit: Cannot reach the sandbox at http:\/\/127\.0\.0\.1:\d+: is `checkout-kit sandbox` running\?/);
  });

  it('an event type with --data naming it exits 1 with the same line, and sends no sample', async () => {
    const dir = await sandboxDir();
    const stopped = await openSandbox({ dataDir: dir });
    await stopped.close();
    receiver = await startTestReceiver({ secret: SECRET });
    const result = await runCli(['trigger', 'payment.paid', '--data', dir, '--to', receiver.url, '--secret', SECRET], { cwd });
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/^checkout-kit: Cannot reach the sandbox at http:\/\/127\.0\.0\.1:\d+: is `checkout-kit sandbox` running\?/);
    expect(receiver.deliveries).toEqual([]);
  });
});

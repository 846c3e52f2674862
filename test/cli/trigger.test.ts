import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventSuffix, TriggerEventReport } from '../../src/devtools/index.js';
import type { SandboxCredentials } from '../../src/sandbox/index.js';
import { EVENT_TYPES } from '../../src/schemas/index.js';
import { startReceiver, waitUntil, type Receiver } from '../sandbox/helpers.js';
import { execCli, runCli, spawnCli, terminateAll, waitForLine } from '../support/cli.js';
import { TEST_KEYS } from '../support/fixtures.js';
import { listenOnLoopback } from '../support/ports.js';
import { removeTempDirs, tempDir } from '../support/temp-dirs.js';
import { SECRET } from '../webhooks/helpers.js';

// `checkout-kit trigger EVENT-TYPE --to <serve>` with the real `sandbox` and `serve` processes on a
// temp store: with a sandbox, the event is about a real payment or invoice, which serve confirms;
// without one, a sample, which serve acknowledges and leaves alone.

const HANDLERS = `
import { appendFileSync } from 'node:fs';
const record = (resource, ctx) => appendFileSync(new URL('./calls.log', import.meta.url), JSON.stringify({ key: ctx.key, source: ctx.source }) + '\\n');
export default { paid: record, overpaid: record, underpaid: record, expired: record };
`;

/** Generous: serve's confirm read and handler run on two shared cores. */
const DEADLINE_MS = 30_000;

const children: ChildProcess[] = [];
const receivers: Receiver[] = [];
afterAll(async () => {
  await terminateAll(children);
  await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
  await removeTempDirs();
});

/** A shop folder with the recording fulfillment module. */
async function shopDir(): Promise<string> {
  const dir = await tempDir('ck-trigger-');
  await writeFile(join(dir, 'fulfillment.mjs'), HANDLERS);
  return dir;
}

/** Handler calls so far, in order. */
function calls(dir: string): Array<{ key: string; source: string }> {
  const log = join(dir, 'calls.log');
  if (!existsSync(log)) return [];
  return readFileSync(log, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
}

/** `checkout-kit serve --port 0` in `dir`; its webhook URL. */
async function startServe(dir: string, env: Record<string, string>): Promise<string> {
  const serve = spawnCli(['serve', '--port', '0'], { cwd: dir, env });
  children.push(serve);
  const [, url] = await waitForLine(serve, /listening on (http:\/\/\S+)/);
  return `${url}/webhooks/checkout`;
}

/** A store command's `--json` answer, or undefined when it exits non-zero (e.g. nothing stored yet). */
async function storeJson<T>(dir: string, env: Record<string, string>, args: string[]): Promise<T | undefined> {
  const result = await runCli([...args, '--json'], { cwd: dir, env });
  return result.code === 0 ? (JSON.parse(result.stdout) as T) : undefined;
}

interface StoredRun {
  key: string;
  status: string;
}

/** Every run done, none failed, every event dispatched, and no alert posted. */
async function expectNothingFailedOrAlerted(dir: string, env: Record<string, string>, alerts: Receiver): Promise<void> {
  expect(await storeJson<StoredRun[]>(dir, env, ['runs', '--failed'])).toEqual([]);
  // An event's dispatch run completes just after the work it did (the payment closed): wait for it.
  const settled = (runs: StoredRun[]) => runs.every((run) => run.status === 'done' || run.status === 'failed');
  await waitUntil(
    async () =>
      settled((await storeJson<StoredRun[]>(dir, env, ['runs']))!) &&
      settled((await storeJson<Array<{ run?: StoredRun }>>(dir, env, ['events', 'list']))!.flatMap((event) => (event.run ? [event.run] : []))),
    DEADLINE_MS,
    'every run to finish',
  );
  expect(await storeJson<StoredRun[]>(dir, env, ['runs', '--failed'])).toEqual([]);
  const runs = (await storeJson<StoredRun[]>(dir, env, ['runs']))!;
  expect(runs.filter((run) => run.status !== 'done')).toEqual([]);
  const events = (await storeJson<Array<{ id: string; run?: StoredRun }>>(dir, env, ['events', 'list']))!;
  expect(events.filter((event) => event.run?.status !== 'done')).toEqual([]);
  expect(alerts.received).toEqual([]);
}

describe('trigger EVENT-TYPE with a sandbox running (real sandbox and serve processes)', () => {
  let dir: string;
  let env: Record<string, string>;
  let to: string;
  let alerts: Receiver;

  beforeAll(async () => {
    dir = await shopDir();
    alerts = await startReceiver();
    receivers.push(alerts);
    // No --webhook-url: what serve receives comes from trigger alone.
    const sandbox = spawnCli(['sandbox', '--port', '0', '--data', join(dir, '.sandbox')], { cwd: dir });
    children.push(sandbox);
    const [, , credentialsPath] = await waitForLine(sandbox, /sandbox listening on (http:\/\/127\.0\.0\.1:\d+)\ncredentials: (\S+)\n/);
    const creds = JSON.parse(await readFile(credentialsPath!, 'utf8')) as SandboxCredentials;
    const { merchant } = creds.test;
    env = {
      CHECKOUT_BASE_URL: creds.baseUrl,
      CHECKOUT_API_KEY: merchant.apiKey,
      CHECKOUT_SIGNING_SECRET: merchant.signingSecret,
      CHECKOUT_INVOICE_KEY: merchant.invoiceKey,
      CHECKOUT_WEBHOOK_SECRET: creds.webhookSecret,
      CHECKOUT_ALERT_URL: alerts.url,
      LOG_LEVEL: 'warn',
    };
    to = await startServe(dir, env);
  });

  it('trigger payment.paid --to serve pays a real payment at the sandbox: serve confirms it, runs its handler once and closes it; no run fails, no alert', async () => {
    // The trigger command as its own process, in the shop folder (its .env would hold serve's
    // variables), finding the sandbox in ./.sandbox.
    const triggered = await execCli(['trigger', 'payment.paid', '--to', to, '--json'], { cwd: dir, env });
    expect(triggered.code, triggered.stderr).toBe(0);
    const [event] = (await storeJson<Array<{ type: string; resourceId: string }>>(dir, env, ['events', 'list', '--type', 'payment.paid']))!;
    const paymentId = event!.resourceId;
    const key = `payment:${paymentId}:paid`;

    // The payment closes when serve learns it is paid, before its handler has run: wait for the handler's run too.
    await waitUntil(
      async () => {
        const shown = await storeJson<{ record: { open: boolean }; runs: StoredRun[] }>(dir, env, ['payments', 'show', paymentId]);
        return shown?.record.open === false && shown.runs.some((run) => run.key === key && run.status === 'done');
      },
      DEADLINE_MS,
      'serve to close the payment and complete its handler',
    );
    expect(calls(dir).filter((call) => call.key.startsWith(`payment:${paymentId}:`))).toEqual([{ key, source: 'webhook' }]);
    expect(await storeJson(dir, env, ['payments', 'show', paymentId])).toMatchObject({
      record: { outcome: 'paid', open: false },
      runs: [{ key, status: 'done' }],
    });
    await expectNothingFailedOrAlerted(dir, env, alerts);
    // The payment is the sandbox's own, paid there.
    expect(JSON.parse(triggered.stdout)).toMatchObject({
      type: 'payment.paid',
      kind: 'payment',
      resourceId: paymentId,
      finalStatus: 'PAID',
      sent: { sent: 1, delivered: 1 },
    });
  });

  /** What serve makes of each event type's real resource. Expired stays open: money may still come late. */
  const EXPECTED: Record<EventSuffix, { status: string; outcome: string; handled: boolean; open: boolean }> = {
    created: { status: 'CREATED', outcome: 'pending', handled: false, open: true },
    partially_paid: { status: 'PARTIALLY_PAID', outcome: 'pending', handled: false, open: true },
    paid: { status: 'PAID', outcome: 'paid', handled: true, open: false },
    overpaid: { status: 'OVERPAID', outcome: 'overpaid', handled: true, open: false },
    expired: { status: 'EXPIRED', outcome: 'expired', handled: true, open: true },
  };

  it.each(EVENT_TYPES)(
    'trigger %s --to serve: a real resource in that state, confirmed by serve, handled at most once; no run fails, no alert',
    async (type) => {
      const triggered = await runCli(['trigger', type, '--to', to, '--json'], { cwd: dir, env });
      expect(triggered.code, triggered.stderr).toBe(0);
      const report = JSON.parse(triggered.stdout) as TriggerEventReport;
      const expected = EXPECTED[type.slice(report.kind.length + 1) as EventSuffix];
      expect(report).toMatchObject({ type, finalStatus: expected.status, event: { type }, sent: { delivered: 1 } });

      await waitUntil(
        async () => (await storeJson<{ run?: StoredRun }>(dir, env, ['events', 'show', report.event.id]))?.run?.status === 'done',
        DEADLINE_MS,
        `serve to dispatch ${report.event.id}`,
      );
      // The handler's run follows the event's, under its own lease.
      const handlerKey = `${report.kind}:${report.resourceId}:${expected.outcome}`;
      if (expected.handled) {
        await waitUntil(async () => calls(dir).some((call) => call.key === handlerKey), DEADLINE_MS, `serve to call the handler of ${handlerKey}`);
        // The call is logged as the handler returns; its run is done once serve has stored that, a moment later.
        await waitUntil(
          async () => (await storeJson<StoredRun[]>(dir, env, ['runs']))?.find((run) => run.key === handlerKey)?.status === 'done',
          DEADLINE_MS,
          `serve to store ${handlerKey} as done`,
        );
      }
      const handled = calls(dir).filter((call) => call.key.startsWith(`${report.kind}:${report.resourceId}:`));
      expect(handled).toEqual(expected.handled ? [{ key: handlerKey, source: 'webhook' }] : []);
      expect(await storeJson(dir, env, [`${report.kind}s`, 'show', report.resourceId])).toMatchObject({
        record: { outcome: expected.outcome, open: expected.open },
      });
      await expectNothingFailedOrAlerted(dir, env, alerts);
    },
  );
});

describe('trigger EVENT-TYPE without a sandbox (real serve process)', () => {
  it('sends a sample of every type: serve acknowledges each, makes no confirm read, runs no handler, follows no resource; no run fails, no alert', async () => {
    const dir = await shopDir();
    const alerts = await startReceiver();
    receivers.push(alerts);
    // Where serve's confirm reads would go: counts them, and knows no payment or invoice.
    const service = Fastify();
    const reads: string[] = [];
    service.setNotFoundHandler(async (request, reply) => {
      reads.push(`${request.method} ${request.url}`);
      return reply.code(404).send({ error: { code: 'not_found', message: 'No such resource.' } });
    });
    const servicePort = await listenOnLoopback(service);
    try {
      const env = {
        CHECKOUT_BASE_URL: `http://127.0.0.1:${servicePort}`,
        CHECKOUT_API_KEY: TEST_KEYS.apiKey,
        CHECKOUT_SIGNING_SECRET: TEST_KEYS.signingSecret,
        CHECKOUT_INVOICE_KEY: TEST_KEYS.invoiceKey,
        CHECKOUT_WEBHOOK_SECRET: SECRET,
        CHECKOUT_ALERT_URL: alerts.url,
        LOG_LEVEL: 'warn',
      };
      const to = await startServe(dir, env);

      const answers: Array<{ sample?: boolean; status: number; event: { id: string; type: string } }> = [];
      for (const type of EVENT_TYPES) {
        // payment.paid as its own process, the others in this one (two shared cores).
        const args = ['trigger', type, '--to', to, '--json'];
        const triggered = type === 'payment.paid' ? await execCli(args, { cwd: dir, env }) : await runCli(args, { cwd: dir, env });
        expect(triggered.code, triggered.stderr).toBe(0);
        answers.push(JSON.parse(triggered.stdout));
      }

      const sent = answers.map((answer) => answer.event.id);
      await waitUntil(
        async () => {
          const events = (await storeJson<Array<{ id: string; run?: StoredRun }>>(dir, env, ['events', 'list'])) ?? [];
          return events.length === sent.length && events.every((event) => event.run?.status === 'done');
        },
        DEADLINE_MS,
        'serve to dispatch every sample',
      );
      expect(((await storeJson<Array<{ id: string }>>(dir, env, ['events', 'list'])) ?? []).map((event) => event.id).sort()).toEqual([...sent].sort());
      expect(await storeJson(dir, env, ['payments', 'list'])).toEqual([]);
      expect(await storeJson(dir, env, ['invoices', 'list'])).toEqual([]);
      expect(reads).toEqual([]);
      expect(calls(dir)).toEqual([]);
      await expectNothingFailedOrAlerted(dir, env, alerts);
      // Recognisable as samples: by the id, and in what trigger says.
      for (const answer of answers) expect(answer).toMatchObject({ sample: true, status: 200, event: { id: expect.stringMatching(/^sample_evt_/) } });
    } finally {
      await service.close();
    }
  });
});

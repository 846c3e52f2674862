import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { newWebhookSecret, signWebhook } from '../../src/webhooks/index.js';
import { execCli, spawnCli, waitForLine } from '../support/cli.js';
import { TEST_KEYS } from '../support/fixtures.js';
import { eventually, freePort } from '../support/ports.js';
import { removeTempDirs, tempDir } from '../support/temp-dirs.js';
import { readCalls, RECORDING_HANDLERS, stopChild } from './support/hostile-serve.js';
import { reportFigures, sized } from './support/report.js';
import { payment, serveEnvFor, startStandIn, type FaultMode, type StandIn } from './support/service-standin.js';

// the service misbehaving. A real `checkout-kit serve` confirms signed
// payment events against a stand-in Get payment that answers, per payment, 500, 429 with
// Retry-After, never (past the client's 15 s timeout), truncated JSON, another payment than the
// one asked for, or amounts going backwards. Nothing may be fulfilled wrongly or lost; once the
// stand-in recovers, reconcile and serve's retries fulfil everything exactly once.

const PER_MODE = sized('FAULTS_SERVICE_PAYMENTS', 2);
const FAULTS: FaultMode[] = ['http500', 'rate429', 'timeout', 'truncated', 'wrongId'];

const children: ChildProcess[] = [];
const standIns: StandIn[] = [];
afterEach(async () => {
  await Promise.all(children.splice(0).map((child) => stopChild(child, 5_000)));
  await Promise.all(standIns.splice(0).map((standIn) => standIn.close()));
  await removeTempDirs();
});

describe('the service misbehaving under a real checkout-kit serve', () => {
  it('500s, 429s, timeouts, truncated JSON, a wrong id and backwards amounts: nothing fulfilled wrongly, nothing lost, all fulfilled exactly once after recovery', async () => {
    const started = performance.now();
    const dir = await tempDir('ck-service-faults-');
    const secret = newWebhookSecret();
    const calls = join(dir, 'calls.jsonl');
    await writeFile(join(dir, 'fulfillment.mjs'), RECORDING_HANDLERS);

    const other = payment(randomUUID(), '10.00', '10.00', 3_600_000, { referenceId: 'order-of-someone-else' });
    const standIn = await startStandIn({ apiKey: TEST_KEYS.apiKey, otherPayment: other });
    standIns.push(standIn);

    // The payments: two that behave, PER_MODE per fault, two whose amounts go backwards.
    const byMode = new Map<FaultMode, string[]>();
    const add = (mode: FaultMode, count: number) => {
      const ids = Array.from({ length: count }, () => randomUUID());
      byMode.set(mode, ids);
      for (const id of ids) {
        // Paid at the service, except the wrong-id ones: unpaid until the service recovers, so a
        // paid handler before then can only come from the other payment's data.
        standIn.add(mode, payment(id, '10.00', mode === 'wrongId' ? '0' : '10.00'));
      }
    };
    add('ok', 2);
    for (const mode of FAULTS) add(mode, PER_MODE);
    add('backwards', 2);
    const all = [...byMode.values()].flat();

    const port = await freePort();
    const url = `http://127.0.0.1:${port}/webhooks/checkout`;
    const env = {
      ...serveEnvFor(standIn, { dir, secret, calls }),
      // The default 50/s falls to 2.5/s under a 429 storm; 200/s keeps the other faults moving (floor 10/s).
      CHECKOUT_MAX_RPS: '200',
      // The backwards payments' paid handler keeps running a while (see below).
      HOSTILE_HOLD_IDS: byMode.get('backwards')!.join(','),
      HOSTILE_HOLD_MS: '4000',
      LOG_LEVEL: 'warn',
    };
    const serve = spawnCli(['serve', '--port', String(port)], { cwd: dir, env });
    children.push(serve);
    let stderr = '';
    serve.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    await waitForLine(serve, /checkout-kit serve listening on/);

    // Signed payment events, as the service would send them (each a hint that the payment is paid).
    const eventIds: string[] = [];
    const deliver = async (paymentId: string, type = 'payment.paid') => {
      const eventId = `evt_${randomUUID()}`;
      const data = payment(paymentId, '10.00', type === 'payment.paid' ? '10.00' : '4.00');
      const body = JSON.stringify({ id: eventId, type, createdAt: new Date().toISOString(), environment: 'test', data });
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...signWebhook({ id: eventId, body, secret }) },
        body,
      });
      expect(response.status, await response.text()).toBe(200);
      eventIds.push(eventId);
    };
    for (const id of all) await deliver(id);

    // The backwards payments are paid on their first read; then, while their handler still runs,
    // news arrives and the amounts go back. (Once the handler is done and the payment closed, news
    // of it costs no read at all: nothing could move a paid outcome.)
    const backwards = byMode.get('backwards')!;
    await eventually(() => (backwards.every((id) => readCalls(calls).some((call) => call.id === id)) ? true : undefined), 30_000, 200).catch(() => false);
    for (const id of backwards) await deliver(id, 'payment.partially_paid');

    // Let every fault show: each faulty payment read (and retried), and at least one read given up
    // on at the client's timeout (15 s).
    const faulty = FAULTS.flatMap((mode) => byMode.get(mode)!);
    const faultsShown = await eventually(
      () => {
        const retried = faulty.every((id) => standIn.reads(id) >= (byMode.get('wrongId')!.includes(id) ? 1 : 2));
        const backwardsSeen = backwards.every((id) => (standIn.served(id).backwards ?? 0) >= 1);
        return retried && backwardsSeen && standIn.timedOut() >= 1 ? true : undefined;
      },
      45_000,
      250,
    ).catch(() => false);
    const duringFaults = readCalls(calls);
    const readsDuringFaults = standIn.totals();

    // Nothing lost: every event is stored (acknowledged only once stored).
    const storedEvents = (await cliJson(['events', 'list', '--json', '--limit', '1000'], dir, env)) as Array<{ id: string }>;

    // The service recovers: the wrong-id payments are paid by now, everything answers correctly.
    standIn.recover();
    for (const id of byMode.get('wrongId')!) standIn.setTruth(id, payment(id, '10.00', '10.00'));
    const reconciled = await cliJson(['reconcile', '--json', '--older-than', '0'], dir, env, [0, 1]);

    // Everything fulfilled once: wait until every event's dispatch is done (serve's own retries
    // then find nothing left to call), then count.
    const settled = await eventually(
      async () => {
        const events = (await cliJson(['events', 'list', '--json', '--limit', '1000'], dir, env)) as Array<{ id: string; run?: { status: string } }>;
        const keys = new Set(readCalls(calls).map((call) => call.key));
        const done = all.every((id) => keys.has(`payment:${id}:paid`));
        return done && events.every((event) => event.run?.status === 'done') ? true : undefined;
      },
      60_000,
      1_000,
    ).catch((error: Error) => error.message);
    await sleep(1_500);
    const finalCalls = readCalls(calls);
    const finalEvents = (await cliJson(['events', 'list', '--json', '--limit', '1000'], dir, env)) as Array<{
      id: string;
      resourceId?: string;
      run?: { status: string; attempts: number };
    }>;
    const attemptsOf = (ids: string[]) =>
      finalEvents.filter((event) => event.resourceId !== undefined && ids.includes(event.resourceId)).map((event) => event.run?.attempts ?? 0);
    const runs = (await cliJson(['runs', '--json'], dir, env)) as Array<{ key: string; status: string }>;
    const payments = (await cliJson(['payments', 'list', '--json'], dir, env)) as Array<{ id: string; outcome: string }>;

    const perKey = new Map<string, number>();
    for (const call of finalCalls) perKey.set(call.key, (perKey.get(call.key) ?? 0) + 1);
    const totals = standIn.totals();
    reportFigures('service-faults', {
      payments: all.length,
      events: eventIds.length,
      reads: totals.reads ?? 0,
      readsDuringFaults: readsDuringFaults.reads ?? 0,
      answered500: totals['500'] ?? 0,
      answered429: totals['429'] ?? 0,
      held: totals.held ?? 0,
      clientTimeouts: standIn.timedOut(),
      truncated: totals.truncated ?? 0,
      wrongId: totals['wrong-id'] ?? 0,
      backwards: totals.backwards ?? 0,
      dispatchAttempts: finalEvents.reduce((sum, event) => sum + (event.run?.attempts ?? 0), 0),
      eventsRetried: finalEvents.filter((event) => (event.run?.attempts ?? 0) > 1).length,
      handlerCalls: finalCalls.length,
      handlerCallsBeforeRecovery: duringFaults.length,
      bySource: [...new Set(finalCalls.map((call) => call.source))]
        .map((source) => `${source}:${finalCalls.filter((call) => call.source === source).length}`)
        .join(','),
      reconcileFulfilled: reconciled.fulfilled,
      reconcileChecked: reconciled.checked,
      faultsShown,
      seconds: Math.round((performance.now() - started) / 1000),
    });

    // Every fault was served, and retried, before the recovery.
    expect(faultsShown, JSON.stringify(Object.fromEntries(faulty.map((id) => [id, standIn.served(id)])))).toBe(true);

    // Before recovery: the payments that behave and the backwards ones were fulfilled, once, as
    // paid; nothing else ran (in particular nothing for the wrong-id payments, unpaid until then).
    const fulfilledBefore = new Set(duringFaults.map((call) => call.key.split(':')[1]));
    expect(
      duringFaults.filter((call) => call.key !== `payment:${call.id}:paid`),
      'before recovery, a handler got another payment than the one its key names, or another outcome than paid',
    ).toEqual([]);
    expect(
      faulty.filter((id) => fulfilledBefore.has(id)),
      'fulfilled before the service could confirm it',
    ).toEqual([]);
    expect([...fulfilledBefore].sort()).toEqual([...byMode.get('ok')!, ...backwards].sort());
    // Nothing lost: every event stored, and the dispatch of every event whose confirm read kept
    // failing (500, 429, truncated JSON) retried.
    expect(storedEvents.map((event) => event.id).sort()).toEqual([...eventIds].sort());
    const failingReads = ['http500', 'rate429', 'truncated'].flatMap((mode) => byMode.get(mode as FaultMode)!);
    expect(
      attemptsOf(failingReads).every((attempts) => attempts >= 2),
      `dispatch attempts ${attemptsOf(failingReads).join(',')}`,
    ).toBe(true);
    expect(settled).toBe(true);

    // Exactly once per payment, as paid, with the payment its key names.
    expect(finalCalls.filter((call) => call.key !== `payment:${call.id}:paid`)).toEqual([]);
    expect([...perKey.entries()].filter(([, count]) => count !== 1)).toEqual([]);
    expect(finalCalls.map((call) => call.id).sort()).toEqual([...all].sort());
    for (const call of finalCalls) expect(call.amountReceived).toBe('10.00');
    // Outcomes never moved back; nothing left failed or pending.
    expect(payments.filter((p) => all.includes(p.id)).map((p) => p.outcome)).toEqual(all.map(() => 'paid'));
    expect(runs.filter((run) => run.status !== 'done')).toEqual([]);
    expect(serve.exitCode).toBeNull();
    expect(stderr).not.toMatch(/lost the lease|completion could not be stored/);
  });
});

/** Run a CLI command beside serve on the same store; its JSON output. */
async function cliJson(args: string[], cwd: string, env: NodeJS.ProcessEnv, codes = [0]): Promise<any> {
  const result = await execCli(args, { cwd, env });
  expect(codes, `checkout-kit ${args.join(' ')} exited ${result.code}:\n${result.stderr}`).toContain(result.code);
  return JSON.parse(result.stdout);
}

import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FulfillmentEngine, type FulfillmentHandlers } from '../../src/fulfillment/index.js';
import { SqliteStore } from '../../src/store/index.js';
import { TSX_LOADER } from '../support/cli.js';
import { FakeReader } from '../support/fake-reader.js';
import { samplePayment } from '../support/fixtures.js';

const WORKER = fileURLToPath(new URL('./fixtures/fulfil-process.ts', import.meta.url));
let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ck-crash-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const output: string[] = [];
function worker(args: string[]) {
  const child = spawn(process.execPath, ['--import', TSX_LOADER, WORKER, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  return child;
}

async function until(check: () => boolean, timeoutMs = 40_000) {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out; worker output: ${output.join('')}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('fulfillment survives a crash', () => {
  it('a process SIGKILLed inside a handler: after restart the handler runs again with the same key, and completes once', async () => {
    const store = join(dir, 'store');
    const log = join(dir, 'handler.log');
    const payment = samplePayment({ amount: '25.00', amountReceived: '25.00' });
    const first = worker([store, log, 'hang', JSON.stringify(payment)]);
    await until(() => existsSync(log) && readFileSync(log, 'utf8').includes('start'));
    const killed = new Promise((resolve) => first.once('exit', (_code, signal) => resolve(signal)));
    first.kill('SIGKILL');
    expect(await killed).toBe('SIGKILL');

    const second = worker([store, log, 'finish', JSON.stringify(payment)]);
    const exitCode = await Promise.race([
      new Promise((resolve) => second.once('exit', resolve)),
      new Promise((_, reject) => setTimeout(() => reject(new Error(`second worker did not exit; output: ${output.join('')}`)), 50_000)),
    ]);
    expect(exitCode).toBe(0);

    const key = `payment:${payment.id}:paid`;
    expect(readFileSync(log, 'utf8').trim().split('\n')).toEqual([`start ${key} 1`, `start ${key} 2`, `done ${key}`]);
    const reopened = new SqliteStore({ dir: store });
    await reopened.open();
    const runs = await reopened.listRuns({ kind: 'fulfillment' });
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ key, status: 'done', attempts: 2 });
    await reopened.close();
  });

  it('race on the embedded store: three store instances (as three processes would) × 200 paid payments → one call each', async () => {
    const reader = new FakeReader();
    const payments = Array.from({ length: 200 }, () => reader.put(samplePayment({ amount: '25.00', amountReceived: '25.00' })));
    const calls: string[] = [];
    const handlers: FulfillmentHandlers = { paid: async (resource) => void calls.push(resource.id) };
    const stores = [0, 1, 2].map(() => new SqliteStore({ dir: join(dir, 'shared') }));
    for (const store of stores) await store.open();
    const sources = ['webhook', 'return', 'reconcile'] as const;
    const engines = stores.map((store) => new FulfillmentEngine({ store, handlers, client: reader }));
    await Promise.all(payments.flatMap((p) => sources.map((source, i) => engines[i]!.process({ kind: 'payment', id: p.id, source }))));
    for (const store of stores) await store.close();
    expect(calls).toHaveLength(200);
    expect(new Set(calls).size).toBe(200);
  });
});

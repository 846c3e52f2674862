import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/store/index.js';
import type { Run } from '../../src/store/index.js';
import { execCli } from '../support/cli.js';
import { removeTempDirs, tempDir } from '../support/temp-dirs.js';
import { sampleEvent } from '../store/fixtures/sample-event.js';

afterEach(removeTempDirs);

const T0 = Date.parse('2026-01-01T00:00:00Z');

// Runs written by one process must read back whole in another (the real CLI) and after a restart:
// waiting ones, one enqueued later than its receipt, and a claimed one.
describe('dispatch runs of events still waiting, across a second process and a restart', () => {
  it('are read back the same by `checkout-kit runs` and `events list` in another process and by a reopened store', async () => {
    const cwd = await tempDir('ck-waiting-runs-');
    const dir = join(cwd, '.checkout-kit');
    const writer = new SqliteStore({ dir });
    await writer.open();
    for (let i = 0; i < 20; i++) {
      const at = new Date(T0 + i * 1000);
      await writer.insertEvent({ ...sampleEvent(`evt_${String(i).padStart(2, '0')}`), receivedAt: at.toISOString() }, at);
    }
    // Two more (one enqueued later than its receipt) and a claim.
    await writer.insertEvent({ ...sampleEvent('evt_20'), receivedAt: new Date(T0 + 20_000).toISOString() }, new Date(T0 + 20_000));
    await writer.insertEvent({ ...sampleEvent('evt_21'), receivedAt: new Date(T0 + 21_000).toISOString() }, new Date(T0 + 21_250));
    await writer.claimRun('event:evt_03', { owner: 'worker-1', leaseMs: 60_000, now: new Date(T0 + 30_000) });
    const expected = await writer.listRuns({ limit: 1000 });
    await writer.close();

    expect(expected).toHaveLength(22);
    expect(expected.find((run) => run.key === 'event:evt_21')).toMatchObject({
      status: 'pending',
      attempts: 0,
      createdAt: new Date(T0 + 21_250).toISOString(),
    });
    expect(expected.find((run) => run.key === 'event:evt_03')).toMatchObject({ status: 'running', attempts: 1, owner: 'worker-1' });

    // Another process (the real CLI) reads the folder: every run whole, newest first, and each
    // waiting event listed with its run.
    const env = { CHECKOUT_STORE: 'file:.checkout-kit' };
    const listed = await execCli(['runs', '--json'], { cwd, env });
    expect(listed).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(listed.stdout)).toEqual(JSON.parse(JSON.stringify(expected.toReversed())));
    const events = await execCli(['events', 'list', '--json'], { cwd, env });
    expect(events.code).toBe(0);
    const withRuns = JSON.parse(events.stdout) as Array<{ id: string; run: Run }>;
    expect(withRuns).toHaveLength(22);
    expect(withRuns.find((event) => event.id === 'evt_00')?.run).toEqual(JSON.parse(JSON.stringify(expected.find((run) => run.key === 'event:evt_00'))));

    // A restart opens it and gives the same runs; the next claim takes the oldest waiting one.
    const restarted = new SqliteStore({ dir });
    await restarted.open();
    expect(await restarted.listRuns({ limit: 1000 })).toEqual(expected);
    const due = await restarted.listRuns({ dueBy: new Date(T0 + 40_000).toISOString(), status: 'pending', limit: 1 });
    expect(due.map((run) => run.key)).toEqual(['event:evt_00']);
    expect(await restarted.claimRun('event:evt_00', { owner: 'worker-2', leaseMs: 60_000, now: new Date(T0 + 40_000) })).toMatchObject({
      attempts: 1,
      owner: 'worker-2',
      createdAt: new Date(T0).toISOString(),
    });
    await restarted.close();
  });
});

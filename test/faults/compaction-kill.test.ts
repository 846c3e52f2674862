import { watch } from 'node:fs';
import { mkdir, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventRecord } from '../../src/store/index.js';
import { newWebhookSecret } from '../../src/webhooks/index.js';
import { eventually, freePort } from '../support/ports.js';
import { removeTempDirs, tempDir } from '../support/temp-dirs.js';
import { reportFigures, sized } from './support/report.js';
import { startAnsweringService, type AnsweringService } from './support/answering-service.js';
import { cli, deliver, delivery, Processes, startServe, stop, STORE_FULFILLMENT } from './support/store-processes.js';

// Compaction seals the journal segment under the lock, then writes the snapshot without it, while
// writes go on in the next segment. A crash between the seal and the snapshot's rename must lose
// nothing: the old snapshot plus the sealed segments hold it all. Here the real `serve` is
// SIGKILLed the moment its prepared snapshot file appears (inotify on the store folder), while
// signed deliveries keep coming, and restarted on the same store, several times.

const processes = new Processes();
// serve confirms events with the service: one that knows every payment, as just created.
let service: AnsweringService;
beforeAll(async () => {
  service = await startAnsweringService();
});
afterAll(async () => {
  await processes.stopAll();
  await service.close();
  await removeTempDirs();
});

const KILLS = sized('FAULTS_COMPACTION_KILLS', 4);
/** Padding per delivery: with the stored payment, ~2 × this per event, so a 4 MiB threshold is passed every ~35 (amid a run of deliveries a compaction comes at four times that, ~140). */
const PAD = 60_000;
const PREPARED = /^snapshot\.json\.(\d+)-[0-9a-f-]+\.next$/;

/** The snapshot's journal generation, -1 while there is none. */
async function generation(storeDir: string): Promise<number> {
  try {
    return (JSON.parse(await readFile(join(storeDir, 'snapshot.json'), 'utf8')) as { journalGeneration: number }).journalGeneration;
  } catch {
    return -1;
  }
}

describe('serve SIGKILLed mid-compaction (real serve, real files)', () => {
  it(`killed ${KILLS} times between a seal and its snapshot's rename: every acknowledged event is there once, the store checks healthy, nothing is left behind`, async () => {
    const cwd = await tempDir('ck-compaction-shop-');
    const storeDir = join(await tempDir('ck-compaction-store-'), 'store');
    await mkdir(storeDir);
    const secret = newWebhookSecret();
    const env = { ...service.env, CHECKOUT_STORE: `file:${storeDir}`, CHECKOUT_WEBHOOK_SECRET: secret, CHECKOUT_HANDLERS: STORE_FULFILLMENT, LOG_LEVEL: 'error' };

    const acked: string[] = [];
    let sent = 0;
    let inWindow = 0;
    for (let round = 0; round < KILLS; round++) {
      const port = await freePort();
      const serve = await startServe(processes, port, { cwd, env });
      const exited = new Promise<void>((resolve) => serve.child.once('exit', () => resolve()));
      let killed = false;
      let killedPid = 0;
      const watcher = watch(storeDir, (_kind, name) => {
        const pid = name ? PREPARED.exec(name)?.[1] : undefined;
        if (killed || Number(pid) !== serve.child.pid) return;
        killed = true;
        killedPid = serve.child.pid ?? 0;
        serve.child.kill('SIGKILL');
      });
      try {
        // Eight at a time until the kill (at most 400 per round, about ten compactions).
        for (let batch = 0; !killed && batch < 50; batch++) {
          const ids = Array.from({ length: 8 }, () => `evt_${round}_${sent++}`);
          const results = await Promise.all(ids.map((id) => deliver(port, secret, id, delivery(id, PAD).body).catch(() => undefined)));
          ids.forEach((id, i) => {
            if (results[i]?.status === 200) acked.push(id);
          });
        }
      } finally {
        watcher.close();
      }
      expect(killed, `round ${round}: serve compacted`).toBe(true);
      await exited;
      // The kill landed before the rename when the prepared file is still there.
      if ((await readdir(storeDir)).some((name) => PREPARED.exec(name)?.[1] === String(killedPid))) inWindow += 1;
    }

    // A last start: it opens the files every kill left, clears the abandoned snapshots, and
    // compacts to the end this time (the kills may have left no snapshot at all: then it replays
    // journal-0 and every seal after it).
    const port = await freePort();
    const serve = await startServe(processes, port, { cwd, env });
    const snapshotBefore = await generation(storeDir);
    for (let i = 0; i < 60 && (await generation(storeDir)) === snapshotBefore; i++) {
      const id = `evt_last_${i}`;
      sent += 1;
      expect((await deliver(port, secret, id, delivery(id, PAD).body)).status).toBe(200);
      acked.push(id);
    }
    // Compaction comes at the pause after a run of deliveries (or amid them at four times its threshold).
    await eventually(async () => ((await generation(storeDir)) === snapshotBefore ? undefined : true), 120_000, 100);
    expect(await stop(serve.child)).toBe(0);
    expect(await generation(storeDir)).toBeGreaterThan(snapshotBefore);
    const leftBehind = (await readdir(storeDir)).filter((name) => name.includes('.next'));

    const listed = await cli(processes, ['events', 'list', '--json', '--limit', '100000'], { cwd, env });
    expect(listed.code, listed.stderr).toBe(0);
    const ids = (JSON.parse(listed.stdout) as EventRecord[]).map((event) => event.id);
    const missing = acked.filter((id) => !ids.includes(id));
    const twice = ids.length - new Set(ids).size;
    const checked = await cli(processes, ['store', 'check', '--json', '--dir', storeDir], { cwd, env });
    const report = JSON.parse(checked.stdout) as { status: string; opens: boolean; segments: Array<{ role: string }> };

    reportFigures('compaction-kill', { kills: KILLS, killsBeforeRename: inWindow, sent, acked: acked.length, ackedMissing: missing.length, storedTwice: twice, snapshotBefore, snapshotAfter: await generation(storeDir), storeCheck: report.status, leftBehind: leftBehind.length });
    expect(missing).toEqual([]);
    expect(twice).toBe(0);
    expect(report).toMatchObject({ opens: true });
    expect(report.status).not.toBe('damaged');
    expect(leftBehind).toEqual([]);
    // The scenario is only shown when kills landed inside the window it is about.
    expect(inWindow).toBeGreaterThan(0);
  });
});

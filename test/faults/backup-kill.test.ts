import { createHash } from 'node:crypto';
import { watch } from 'node:fs';
import { copyFile, mkdir, readdir, readFile, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../src/store/index.js';
import { newWebhookSecret } from '../../src/webhooks/index.js';
import { eventually, freePort } from '../support/ports.js';
import { removeTempDirs, tempDir } from '../support/temp-dirs.js';
import { reportFigures } from './support/report.js';
import { startAnsweringService, type AnsweringService } from './support/answering-service.js';
import { storeFiles } from './support/sqlite-file.js';
import { cli, deliver, delivery, Processes, startServe, stop, STORE_FULFILLMENT } from './support/store-processes.js';

// `store backup FILE` copies the store page by page while serve writes (SQLite's online backup).
// Run nightly over the last night's FILE, a backup cut short (SIGKILLed here, as by an OOM killer or
// a reboot) must leave the last good copy at FILE as it was (an operator restores that file alone),
// and must not disturb serve. Here the real `store backup` is SIGKILLed twice over an earlier backup
// of the same name while signed deliveries keep coming: once a quarter of the copy is written, and
// as the copy is written into a database file of the backup folder (when SQLite writes the copy in
// place, the moment it overwrites FILE); then it is run again to the end.

const processes = new Processes();
let service: AnsweringService;
afterAll(async () => {
  await processes.stopAll();
  await service?.close();
  await removeTempDirs();
});

const sha256 = async (file: string) =>
  createHash('sha256')
    .update(await readFile(file))
    .digest('hex');

/** A new store folder holding a copy of `backup`, as an operator restores one. */
async function restoreInto(backup: string): Promise<string> {
  const dir = join(await tempDir('ck-backup-restored-'), 'store');
  await mkdir(dir, { recursive: true });
  await copyFile(backup, storeFiles(dir).db);
  return dir;
}

/** Bytes of every file in `dir` but `except`: what a backup under way has written so far. */
async function bytesBeside(dir: string, except: string): Promise<number> {
  let total = 0;
  for (const name of await readdir(dir)) if (name !== except) total += (await stat(join(dir, name)).catch(() => ({ size: 0 }))).size;
  return total;
}

describe('store backup SIGKILLed mid-copy (real serve, real store backup)', () => {
  it('leaves the last good backup untouched and serve undisturbed; run again, it copies every event acknowledged before it', async () => {
    service = await startAnsweringService();
    const cwd = await tempDir('ck-backup-shop-');
    const storeDir = join(await tempDir('ck-backup-store-'), 'store');
    const backup = join(await tempDir('ck-backup-'), 'nightly', 'store.sqlite');
    const secret = newWebhookSecret();
    const env = {
      ...service.env,
      CHECKOUT_STORE: `file:${storeDir}`,
      CHECKOUT_WEBHOOK_SECRET: secret,
      CHECKOUT_HANDLERS: STORE_FULFILLMENT,
      LOG_LEVEL: 'error',
    };
    const port = await freePort();
    const serve = await startServe(processes, port, { cwd, env });

    const acked: string[] = [];
    let sent = 0;
    /** Deliver `count` events of `pad` bytes of padding, eight at a time. */
    const deliverSome = async (count: number, pad: number) => {
      for (let done = 0; done < count; done += 8) {
        const ids = Array.from({ length: Math.min(8, count - done) }, () => `evt_${sent++}`);
        const results = await Promise.all(ids.map((id) => deliver(port, secret, id, delivery(id, pad).body)));
        ids.forEach((id, i) => {
          expect(results[i]!.status, id).toBe(200);
          acked.push(id);
        });
      }
    };
    // Large enough (~20 MB) that a copy takes many steps.
    await deliverSome(300, 60_000);

    // Last night's backup, whole.
    const first = await cli(processes, ['store', 'backup', backup, '--json'], { cwd, env });
    expect(first.code, first.stderr).toBe(0);
    const lastGood = await sha256(backup);
    const ackedBeforeFirst = acked.length;
    const storeBytes = (await stat(storeFiles(storeDir).db)).size;

    // Tonight's, over it, while deliveries go on: killed twice, once a quarter of the copy is
    // written (into the destination's WAL) and once the copy is being put in place (a database
    // file of the backup folder written, as SQLite checkpoints the copy into it).
    let delivering = true;
    const load = (async () => {
      while (delivering) await deliverSome(8, 2_000);
    })();
    const kills: Array<{ when: string; writtenKiB: number; lastGoodUntouched: boolean }> = [];
    for (const when of ['mid-copy', 'put in place'] as const) {
      const tonight = processes.start(['store', 'backup', backup, '--force', '--json'], { cwd, env });
      const exited = new Promise<NodeJS.Signals | null>((resolve) => tonight.once('exit', (_code, signal) => resolve(signal)));
      const kill = () => tonight.kill('SIGKILL');
      const watcher = watch(dirname(backup), (kind, name) => {
        if (when === 'put in place' && kind === 'change' && name && !/-(wal|shm|journal)$/.test(name)) kill();
      });
      let written = 0;
      try {
        await eventually(
          async () => {
            if (tonight.exitCode !== null || tonight.signalCode !== null) return true;
            written = await bytesBeside(dirname(backup), basename(backup));
            if (when === 'mid-copy' && written >= storeBytes / 4) kill();
            return undefined;
          },
          120_000,
          5,
        );
      } finally {
        watcher.close();
      }
      expect(await exited, `${when}: the backup was killed, not finished`).toBe('SIGKILL');
      // The last good backup is as it was.
      kills.push({ when, writtenKiB: Math.round(written / 1024), lastGoodUntouched: (await sha256(backup)) === lastGood });
    }
    delivering = false;
    await load;
    expect(
      kills.filter((kill) => !kill.lastGoodUntouched),
      'kills that changed the last good backup',
    ).toEqual([]);
    // It still opens alone (copied without anything beside it) and checks healthy.
    const lastGoodCheck = await cli(processes, ['store', 'check', '--json', '--dir', await restoreInto(backup)], { cwd, env });
    expect(lastGoodCheck.code, lastGoodCheck.stderr).toBe(0);

    // serve was not disturbed: it acknowledged throughout (every delivery above asserted 200), and
    // still does.
    await deliverSome(8, 2_000);

    // Run again, to the end: it holds every event acknowledged before it started.
    const ackedBeforeSecond = [...acked];
    const again = await cli(processes, ['store', 'backup', backup, '--force', '--json'], { cwd, env });
    expect(again.code, again.stderr).toBe(0);
    const restoredAgain = await restoreInto(backup);
    const inBackup = await cli(processes, ['events', 'list', '--json', '--limit', '100000'], { cwd, env: { ...env, CHECKOUT_STORE: `file:${restoredAgain}` } });
    expect(inBackup.code, inBackup.stderr).toBe(0);
    const backedUp = new Set((JSON.parse(inBackup.stdout) as StoredEvent[]).map((event) => event.id));
    const missingFromBackup = ackedBeforeSecond.filter((id) => !backedUp.has(id));

    // And the store itself: everything acknowledged, once; healthy.
    expect(await stop(serve.child)).toBe(0);
    const listed = await cli(processes, ['events', 'list', '--json', '--limit', '100000'], { cwd, env });
    expect(listed.code, listed.stderr).toBe(0);
    const ids = (JSON.parse(listed.stdout) as StoredEvent[]).map((event) => event.id);
    const missing = acked.filter((id) => !ids.includes(id));
    const checked = await cli(processes, ['store', 'check', '--json'], { cwd, env });
    const leftBeside = (await readdir(dirname(backup))).filter((name) => name !== basename(backup));

    reportFigures('backup-kill', {
      storeMiB: Math.round(storeBytes / 2 ** 20),
      kills: kills.map((kill) => `${kill.when} after ${kill.writtenKiB} KiB: last good ${kill.lastGoodUntouched ? 'untouched' : 'CHANGED'}`).join('; '),
      ackedBeforeFirstBackup: ackedBeforeFirst,
      acked: acked.length,
      ackedMissing: missing.length,
      missingFromSecondBackup: missingFromBackup.length,
      leftBeside: leftBeside.join(',') || 'nothing',
    });
    expect(missingFromBackup).toEqual([]);
    expect(missing).toEqual([]);
    expect(ids.length).toBe(new Set(ids).size);
    expect(checked.code, checked.stderr).toBe(0);
    expect(JSON.parse(checked.stdout)).toMatchObject({ status: 'healthy' });
  });
});

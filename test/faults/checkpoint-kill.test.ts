import { watch } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { StoredEvent } from '../../src/store/index.js';
import { newWebhookSecret } from '../../src/webhooks/index.js';
import { freePort } from '../support/ports.js';
import { removeTempDirs, tempDir } from '../support/temp-dirs.js';
import { reportFigures, sized } from './support/report.js';
import { startAnsweringService, type AnsweringService } from './support/answering-service.js';
import { checkpointState, type CheckpointState } from './support/sqlite-file.js';
import { cli, deliver, delivery, Processes, startServe, stop, STORE_FULFILLMENT } from './support/store-processes.js';

// A checkpoint copies the pages committed to the WAL into the database file; in WAL mode it is the
// only write to that file. A crash amid it must lose nothing: the WAL still holds every page, and
// the next process to open the store rebuilds its index from the WAL and checkpoints again. Here
// the real `serve` is SIGKILLed the moment its database file is written (inotify on the store
// folder), while signed deliveries keep coming, and restarted on the same store, several times:
// in the checkpoint of the WAL the last kill left, or in a later one.
// Whether the kill landed inside the checkpoint is read from the WAL index it left: a checkpoint
// records the frames it sets out to copy before it copies any, and that it copied them only once
// it has (`nBackfillAttempted` > `nBackfill`).

const processes = new Processes();
let service: AnsweringService;
afterAll(async () => {
  await processes.stopAll();
  await service?.close();
  await removeTempDirs();
});

const KILLS = sized('FAULTS_CHECKPOINT_KILLS', 4);
/** Padding per delivery: ~15 overflow pages each, so the WAL reaches SQLite's automatic checkpoint (1000 pages) every ~50 deliveries. */
const PAD = 60_000;

describe('serve SIGKILLed mid-checkpoint (real serve, real files)', () => {
  it(`killed ${KILLS} times as it writes the database file: every acknowledged event is there once, and the store checks healthy`, async () => {
    // serve confirms events with the service: one that knows every payment, as just created.
    service = await startAnsweringService();
    const cwd = await tempDir('ck-checkpoint-shop-');
    const storeDir = join(await tempDir('ck-checkpoint-store-'), 'store');
    const secret = newWebhookSecret();
    const env = {
      ...service.env,
      CHECKOUT_STORE: `file:${storeDir}`,
      CHECKOUT_WEBHOOK_SECRET: secret,
      CHECKOUT_HANDLERS: STORE_FULFILLMENT,
      LOG_LEVEL: 'error',
    };
    const acked: string[] = [];
    /** Every body sent, by event id: what the store must give back byte for byte. */
    const bodies = new Map<string, string>();
    const send = (id: string) => {
      const { body } = delivery(id, PAD);
      bodies.set(id, body);
      return deliver(port, secret, id, body);
    };
    let sent = 0;
    const states: CheckpointState[] = [];
    let port = 0;
    let laterCheckpoints = 0;
    for (let round = 0; round < KILLS; round++) {
      port = await freePort();
      // A restart after a kill checkpoints the WAL it inherits at its first commit. Every other
      // round lets that one finish and strikes at a later one, once the WAL has been written afresh
      // (its frames counted from the start again).
      const inherited = states.at(-1)?.walFrames ?? 0;
      let armed = round % 2 === 0 || inherited === 0;
      if (!armed) laterCheckpoints += 1;
      // Listening, serve has opened (or created) its database file; from here only a checkpoint writes it.
      const serve = await startServe(processes, port, { cwd, env });
      const exited = new Promise<void>((resolve) => serve.child.once('exit', () => resolve()));
      let killed = false;
      const watcher = watch(storeDir, (kind, name) => {
        if (killed || !armed || kind !== 'change' || name !== 'store.sqlite') return;
        killed = true;
        serve.child.kill('SIGKILL');
      });
      try {
        // Eight at a time until the kill (at most 400 per round, about eight checkpoints).
        for (let batch = 0; !killed && batch < 50; batch++) {
          const ids = Array.from({ length: 8 }, () => `evt_${round}_${sent++}`);
          const results = await Promise.all(ids.map((id) => send(id).catch(() => undefined)));
          ids.forEach((id, i) => {
            if (results[i]?.status === 200) acked.push(id);
          });
          if (!armed) armed = ((await checkpointState(storeDir))?.walFrames ?? inherited) < inherited;
        }
      } finally {
        watcher.close();
      }
      expect(killed, `round ${round}: serve checkpointed`).toBe(true);
      await exited;
      // Read before the next start rebuilds the index.
      const state = await checkpointState(storeDir);
      expect(state, `round ${round}: the WAL index is left`).toBeDefined();
      states.push(state!);
    }
    const midCheckpoint = states.filter((state) => state.attempted > state.backfilled).length;

    // A last start opens what every kill left, takes more deliveries, and stops cleanly: its close
    // checkpoints the whole WAL into the database file.
    port = await freePort();
    const serve = await startServe(processes, port, { cwd, env });
    for (let i = 0; i < 20; i++) {
      const id = `evt_last_${i}`;
      sent += 1;
      expect((await send(id)).status).toBe(200);
      acked.push(id);
    }
    expect(await stop(serve.child)).toBe(0);

    const listed = await cli(processes, ['events', 'list', '--json', '--limit', '100000'], { cwd, env });
    expect(listed.code, listed.stderr).toBe(0);
    const events = JSON.parse(listed.stdout) as StoredEvent[];
    const ids = events.map((event) => event.id);
    const missing = acked.filter((id) => !ids.includes(id));
    const twice = ids.length - new Set(ids).size;
    const bodiesDiffering = events.filter((event) => event.body !== bodies.get(event.id)).length;
    const checked = await cli(processes, ['store', 'check', '--json'], { cwd, env });

    reportFigures('checkpoint-kill', {
      kills: KILLS,
      killsMidCheckpoint: midCheckpoint,
      killsInALaterCheckpoint: laterCheckpoints,
      walFramesAtKills: states.map((state) => state.walFrames).join('/'),
      sent,
      acked: acked.length,
      ackedMissing: missing.length,
      storedTwice: twice,
      bodiesDiffering,
      storeCheck: checked.code === 0 ? (JSON.parse(checked.stdout) as { status: string }).status : `exit ${checked.code}`,
    });
    expect(missing).toEqual([]);
    expect(twice).toBe(0);
    expect(bodiesDiffering).toBe(0);
    expect(checked.code, checked.stderr).toBe(0);
    expect(JSON.parse(checked.stdout)).toMatchObject({ status: 'healthy', problems: [] });
    // The scenario is only shown when kills landed inside the window it is about.
    expect(midCheckpoint).toBeGreaterThan(0);
  });
});

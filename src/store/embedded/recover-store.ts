import { copyFile, mkdir, open, rename, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { StoreError } from '../../errors/index.js';
import { silentLogger } from '../../log/index.js';
import { analyseFolder, checkStore, withStoreLock, type RecoveryAction, type RecoveryPlan, type StoreCheckOptions, type StoreCheckReport } from './check.js';
import { EmbeddedStore } from './embedded-store.js';
import { fsyncDir, fsyncFile, truncateDurably } from './files.js';
import { writeSnapshot } from './snapshot.js';

export interface StoreRecoverOptions extends StoreCheckOptions {
  /** Work out and return the plan, change nothing. @default false */
  dryRun?: boolean;
  /** Names the backup folder (`recovery-<ISO time>`). @default new Date() */
  now?: Date;
}

export interface StoreRecoverResult {
  dir: string;
  /** Whether any file was changed (never for a store with nothing to recover, nor a dry run). */
  changed: boolean;
  dryRun: boolean;
  /** The folder inside the store that holds the files as they were before recovery. */
  backup: string | undefined;
  actions: RecoveryAction[];
  keptEvents: number;
  dropped: RecoveryPlan['dropped'];
  /** The check before recovery. */
  before: StoreCheckReport;
  /** The check after it (when files were changed). */
  after: StoreCheckReport | undefined;
  /** Whether `EmbeddedStore.open()` succeeds now. */
  opens: boolean;
}

/**
 * Bring a damaged embedded store back to its last good state (see `RecoveryPlan`): under the
 * store's lock, copy every file it changes into `recovery-<time>/` inside the store folder, then
 * cut the current journal before its first damaged line (or its torn tail), set aside segments
 * after it, and rewrite the snapshot when it is damaged (from the journals, when every segment
 * since generation 0 is still there) or refers to bodies that are gone. A store with nothing to
 * recover is not touched. When recovery would lose what only a damaged snapshot held, it refuses
 * with a StoreError and changes nothing. Stop every process using the store first.
 * @example
 * const result = await recoverStore('.checkout-kit');
 * if (result.changed) console.log(`copies in ${result.backup}`);
 */
export async function recoverStore(dir: string, options: StoreRecoverOptions = {}): Promise<StoreRecoverResult> {
  const path = resolve(dir);
  const done = await withStoreLock(path, options, async () => {
    const analysis = await analyseFolder(path);
    const { report } = analysis;
    const plan = report.recovery;
    const result: StoreRecoverResult = {
      dir: path,
      changed: false,
      dryRun: options.dryRun ?? false,
      backup: undefined,
      actions: plan.actions,
      keptEvents: plan.keptEvents,
      dropped: plan.dropped,
      before: report,
      after: undefined,
      opens: report.opens,
    };
    if (plan.refusal) throw new StoreError(`Cannot recover the store ${path}: ${plan.refusal} Nothing was changed.`);
    if (!plan.needed || options.dryRun) return result;

    // 1. Copies first, durable before anything changes.
    const backup = await makeBackupFolder(path, options.now ?? new Date());
    result.backup = backup;
    for (const action of plan.actions) {
      if (action.kind === 'set-aside') continue;
      const present = action.kind === 'truncate' || report.snapshot.present;
      if (!present) continue;
      await copyFile(join(path, action.file), join(backup, action.file));
      await fsyncFile(join(backup, action.file));
    }
    await writeFile(join(backup, 'recovery.json'), `${JSON.stringify({ recoveredAt: (options.now ?? new Date()).toISOString(), actions: plan.actions, dropped: plan.dropped, before: report }, null, 2)}\n`);
    await fsyncFile(join(backup, 'recovery.json'));
    await fsyncDir(backup);

    // 2. Segments past the last good line leave first: a crash later cannot replay them.
    for (const action of plan.actions) if (action.kind === 'set-aside') await rename(join(path, action.file), join(backup, action.file));
    await fsyncDir(backup);
    await fsyncDir(path);
    // 3. The snapshot the kept journal replays on (written through a rename, fsync'd).
    const snapshot = plan.actions.find((action) => action.kind === 'rewrite-snapshot');
    if (snapshot) await writeSnapshot(path, { journalGeneration: snapshot.generation, data: await analysis.snapshotData() });
    // 4. The current journal, cut before the damage.
    for (const action of plan.actions) if (action.kind === 'truncate') await truncateFile(join(path, action.file), action.toBytes);
    result.changed = true;
    return result;
  });
  if (!done.changed) return done;
  done.after = await checkStore(path, options);
  done.opens = await opensNow(path, options);
  return done;
}

async function makeBackupFolder(dir: string, now: Date): Promise<string> {
  const stamp = now.toISOString().replace(/[:.]/g, '-');
  for (let n = 1; ; n++) {
    const backup = join(dir, n === 1 ? `recovery-${stamp}` : `recovery-${stamp}-${n}`);
    try {
      await mkdir(backup);
      await fsyncDir(dir);
      return backup;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
}

async function truncateFile(path: string, bytes: number): Promise<void> {
  const handle = await open(path, 'r+');
  try {
    await truncateDurably(handle, bytes);
  } finally {
    await handle.close();
  }
}

/** The proof that counts: the store itself opens the recovered files. */
async function opensNow(dir: string, options: StoreCheckOptions): Promise<boolean> {
  const store = new EmbeddedStore({ dir, logger: silentLogger, lockStaleMs: options.lockStaleMs, unsafeNoLock: options.lock === false });
  try {
    await store.open();
    return true;
  } catch {
    return false;
  } finally {
    await store.close();
  }
}

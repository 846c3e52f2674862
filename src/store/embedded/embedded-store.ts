import { constants } from 'node:fs';
import { open, readdir, unlink, type FileHandle } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { StoreError } from '../../errors/index.js';
import { createLogger, type Logger } from '../../log/index.js';
import { StateStore } from '../state-store.js';
import { emptyStateData, StoreState, type EventRecord, type FrozenState, type Op } from '../state.js';
import { DirLock } from './dir-lock.js';
import { SegmentReaders } from './segment-readers.js';
import { ensureFolder, fileVersion, fsyncDir, JOURNAL_FLAGS, openExisting, readRange, readRangeSync, sizeOf, truncateDurably, writeJournalAt } from './files.js';
import { CorruptLineError, decodeJournal, encodeOp, encodeSeal, JOURNAL_FILE, journalName } from './journal.js';
import { deleteAbandonedSnapshots, installSnapshot, prepareSnapshot, readSnapshot, SNAPSHOT_FILE } from './snapshot.js';

export interface EmbeddedStoreOptions {
  /** Folder of the store, created when missing. Several processes may use it at once. */
  dir: string;
  /**
   * Write a snapshot and start a new journal segment once the journal is larger than both this
   * and the last snapshot (so compaction work stays proportional to what was appended).
   * @default 4 MiB
   */
  compactMinBytes?: number;
  /**
   * A compaction that is due waits until no write was asked for this long (a burst's writes go
   * first), unless the journal has grown to four times the threshold.
   * @default 200
   */
  compactLullMs?: number;
  /**
   * Only where the kernel's file locks cannot be loaded (see `DirLock`), and for a lock directory
   * left by an earlier version: a lock its holder has not refreshed for this long (the holder
   * died) is taken over. proper-lockfile's minimum is 2000.
   * @default 10000
   */
  lockStaleMs?: number;
  /** At most this many operations per group commit. @default 1000 */
  maxBatch?: number;
  /** Warnings (an unfinished journal line after a crash) and compaction failures. @default createLogger() */
  logger?: Logger;
  /**
   * Tests only: skip the cross-process lock, to prove what it protects. Two processes then
   * overwrite each other's journal lines and claim the same runs. Never set it in production.
   * @default false
   */
  unsafeNoLock?: boolean;
}

/** Longest a writer keeps the store lock for consecutive batches before letting other processes in. */
const HOLD_LOCK_MS = 20;

interface Pending {
  op: Op;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/** What one op of a batch came to. */
type Settled = { ok: true; value: unknown } | { ok: false; error: unknown };

/** A segment just sealed: the state as it was at the seal, to be snapshotted as generation `gen`. */
interface Sealed {
  gen: number;
  state: FrozenState;
  /** The snapshot.json the seal was made on: another process's compaction may have replaced it since. */
  basedOn: string;
}

/**
 * The embedded store: a `StoreState` kept in memory, made durable in a folder that several
 * processes (the receiver, a cron `reconcile`, a `replay`) may share.
 *
 * Files: `snapshot.json` (lowdb; the state up to the start of journal segment `journalGeneration`)
 * and `journal-<gen>.jsonl`, one JSON op per line, appended and fsync'd under a cross-process
 * lock. Writes are group-committed: concurrent callers share one append and one fsync, so a write
 * costs what is in the batch, never what is stored. Event bodies stay in the journal line that
 * brought them (the state keeps a byte range), so neither the heap nor the snapshot carries them;
 * old segments are deleted once pruning has dropped every body they hold.
 *
 * Compaction seals the current segment (a last `seal` line; writes go on in the next segment) and
 * then writes the snapshot of the state at the seal without holding the lock, a slice at a time:
 * readers follow seals from the snapshot's segment to the current one, so nothing waits for it.
 *
 * @example
 * const store = new EmbeddedStore({ dir: '.checkout-kit' });
 * await store.open();
 * await store.insertEvent(event); // durable once it resolves
 */
export class EmbeddedStore extends StateStore {
  readonly description: string;
  readonly dir: string;
  private readonly compactMinBytes: number;
  private readonly maxBatch: number;
  private readonly logger: Logger;
  private readonly lock: DirLock;
  /** Kept open for reading event bodies back (dispatch reads each event it runs). */
  private readonly readers = new SegmentReaders((segment) => this.journalPath(segment));

  private status: 'new' | 'open' | 'closed' = 'new';
  /** Version (inode, size, mtime) of the snapshot.json the state was built from, or 'absent'. */
  private snapshotVersion = 'absent';
  private snapshotBytes = 0;
  /** The `journalGeneration` of the snapshot the state was built from (or last installed). */
  private snapshotGen = 0;
  /** Current journal segment: the first unsealed one from `snapshotGen` on. */
  private gen = 0;
  private journal: FileHandle | undefined;
  /** Journal bytes applied to the state: complete lines only. */
  private applied = 0;
  /** Journal size last seen, an unfinished last line included. */
  private seen = 0;
  private tornWarnedAt = -1;
  /** A write failed halfway: the state may hold ops the files do not. Reload before going on. */
  private stale = false;

  private queue: Pending[] = [];
  private flushScheduled = false;
  /**
   * This process holds the store lock and has caught up with the files since taking it: nobody
   * else can have written anything the state lacks, so a read needs no check of its own.
   */
  private current = false;
  /** A refresh queued behind the chain and not started yet: reads arriving meanwhile share it. */
  private queuedRefresh: Promise<void> | undefined;
  /** Serialises this instance's lock holders (flushes, catch-ups, compaction, close). */
  private chain: Promise<unknown> = Promise.resolve();
  private readonly compactLullMs: number;
  /** When a write was last asked for (`performance.now()`): how a lull is told (`maybeCompact`). */
  private lastWriteAskedAt = 0;
  /** When the last group commit ended (`performance.now()`). */
  private lastFlushEndedAt = 0;
  /** A compaction due but put off for a lull, checked again when this fires. */
  private lullCheck: NodeJS.Timeout | undefined;
  /** A compaction whose snapshot is being written (outside the chain and the lock). */
  private compacting: Promise<void> | undefined;

  constructor(options: EmbeddedStoreOptions) {
    super();
    this.dir = resolve(options.dir);
    this.description = `embedded (${this.dir})`;
    this.compactMinBytes = options.compactMinBytes ?? 4 * 1024 * 1024;
    this.compactLullMs = options.compactLullMs ?? 200;
    this.maxBatch = options.maxBatch ?? 1000;
    this.logger = options.logger ?? createLogger();
    this.lock = new DirLock(this.dir, {
      staleMs: options.lockStaleMs ?? 10_000,
      disabled: options.unsafeNoLock ?? false,
      onCompromised: (error) => this.logger.error({ dir: this.dir, err: error }, 'Lost the store lock (this process stalled past the stale time)'),
      onFallback: (error) =>
        this.logger.warn({ dir: this.dir, err: error }, 'No kernel file locks on this platform: the store falls back to a lock directory, which several processes taking over a crashed one at once can race'),
    });
  }

  /** Load the snapshot and replay the journal. A damaged file is a StoreError and stays untouched. */
  async open(): Promise<void> {
    if (this.status === 'open') return;
    if (this.status === 'closed') throw new StoreError(`The store ${this.dir} was closed: create a new EmbeddedStore to open it again.`);
    try {
      await ensureFolder(
        this.dir,
        (cause) => new StoreError(`Cannot open the store ${this.dir}: it (or a folder above it) is a file, not a folder. Point the store at a folder (CHECKOUT_STORE=file:<dir>).`, { cause }),
      );
      await this.exclusive(() =>
        this.lock.with(async () => {
          await this.reload();
          await deleteAbandonedSnapshots(this.dir);
        }),
      );
    } catch (error) {
      // Let go of what the attempt opened: the journal segment it was reading, the lock file.
      await this.journal?.close().catch(() => undefined);
      this.journal = undefined;
      await this.lock.closeFile().catch(() => undefined);
      if (error instanceof StoreError) throw error;
      throw new StoreError(`Cannot open the store ${this.dir}: ${(error as Error).message}. Check the folder and its permissions.`, { cause: error });
    }
    this.status = 'open';
  }

  /** Finish the queued writes and release the files. */
  async close(): Promise<void> {
    if (this.status !== 'open') {
      this.status = 'closed';
      return;
    }
    this.status = 'closed';
    clearTimeout(this.lullCheck);
    // Until nothing is left: a flush under way when close() began may still start a compaction.
    const drain = async () => {
      do {
        await this.exclusive(async () => undefined);
        await this.compacting;
      } while (this.queue.length > 0 || this.flushScheduled || this.compacting);
    };
    await drain();
    // A compaction put off for a lull is due now: a short-lived process (a CLI command) would
    // otherwise only ever compact at four times the threshold. Only a process that wrote: a
    // reader's close changes no file.
    if (this.lastFlushEndedAt > 0) await this.exclusive(() => this.maybeCompact(true));
    await drain();
    await this.exclusive(async () => {
      await this.journal?.close();
      this.journal = undefined;
      await this.readers.clear();
      await this.lock.close();
    });
  }

  /**
   * Start a new journal segment and write a snapshot of everything before it now (also done
   * automatically as the journal grows). Resolves once the snapshot is in place; fails if it
   * could not be written.
   */
  async compact(): Promise<void> {
    this.assertOpen();
    for (;;) {
      // Only when there is one: writes called right after compact() then go after its seal.
      if (this.compacting) await this.compacting;
      const step = await this.exclusive(() =>
        this.lock.with(async () => {
          await this.sync(true);
          // One began while this waited for the chain: wait for it, then see what is left.
          if (this.compacting) return 'busy' as const;
          if (this.applied === 0 && this.seen === 0 && this.snapshotGen === this.gen) return 'done' as const;
          // Wrapped: the lock must not wait for the snapshot, whose install takes the lock again.
          return { written: this.startSnapshot(await this.seal()) };
        }),
      );
      if (step === 'done') return;
      if (step !== 'busy') return step.written;
    }
  }

  protected commit<T>(op: Op): Promise<T> {
    if (this.status !== 'open') return Promise.reject(this.notOpen());
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ op, resolve: resolve as (value: unknown) => void, reject });
      this.lastWriteAskedAt = performance.now();
      this.scheduleFlush();
    });
  }

  /**
   * Before a read: take in what other processes wrote. While a flush holds the lock (and caught
   * up on taking it) there is nothing to take in, so reads go straight to the state instead of
   * queueing behind the group commits; otherwise reads that arrive together share one check.
   */
  protected override refresh(): Promise<void> {
    this.assertOpen();
    if (this.current && !this.lock.lost) return Promise.resolve();
    if (this.queuedRefresh) return this.queuedRefresh;
    const refresh = this.exclusive(async () => {
      // From here on a read that arrives needs a check of its own: this one may be under way already.
      this.queuedRefresh = undefined;
      if (await this.changedOnDisk()) await this.lock.with(() => this.sync(false));
    });
    this.queuedRefresh = refresh;
    return refresh;
  }

  protected override async withBodies<E extends EventRecord>(records: E[]): Promise<Array<Omit<E, 'bodyRef'>>> {
    return Promise.all(
      records.map(async ({ bodyRef, ...event }) => {
        if (!bodyRef) return event;
        // The newest two segments were written lately, so their pages are most likely in the kernel's
        // cache: read synchronously there (a few µs, where a trip through the thread pool cost ~40,
        // for every event a burst's dispatch reads back). Older segments may have to come from disk.
        const readBytes = bodyRef.seg >= this.gen - 1 ? readRangeSync : readRange;
        const literal = await this.readers.with(bodyRef.seg, async (handle) => handle && readBytes(handle, bodyRef.off, bodyRef.off + bodyRef.len));
        // A segment is deleted only once no event of the newest state refers to it: another
        // process pruned this body after our last catch-up.
        if (!literal) return { ...event, body: undefined };
        try {
          return { ...event, body: JSON.parse(literal.toString('utf8')) as string };
        } catch (error) {
          throw new StoreError(
            `The body of event ${event.id} in ${this.journalPath(bodyRef.seg)} (bytes ${bodyRef.off}+${bodyRef.len}) is damaged. Restore the store folder from a backup.`,
            { cause: error },
          );
        }
      }),
    );
  }

  // Group commit.

  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    void this.exclusive(() => this.flush());
  }

  /**
   * Take the queue (what arrived while the previous batch was being written) and commit it as one
   * append. While more work queues up meanwhile, the lock is kept for the next batch too (up to
   * `HOLD_LOCK_MS`): under load a lock round trip and a catch-up per batch were the serial cost.
   */
  private async flush(): Promise<void> {
    this.flushScheduled = false;
    if (this.queue.length === 0) return;
    const written: Array<{ batch: Pending[]; outcomes: Settled[] }> = [];
    let failed: unknown;
    let locked = false;
    try {
      await this.lock.with(async () => {
        locked = true;
        const held = performance.now();
        try {
          // A lock taken over mid-hold (a stalled process) ends the hold; `with` then reports it.
          while (this.queue.length > 0 && performance.now() - held <= HOLD_LOCK_MS && !this.lock.lost) {
            const batch = this.queue.splice(0, this.maxBatch);
            try {
              // Only the first batch under the lock catches up: nobody else writes while we hold it.
              written.push({ batch, outcomes: await this.writeBatch(batch, written.length === 0) });
              this.current = !this.stale && !this.lock.lost;
            } catch (error) {
              // This batch was taken back from the file; the ones before it are durable.
              failed = error;
              this.stale = true;
              this.fail(batch, error);
              return;
            }
          }
        } finally {
          this.current = false;
        }
      });
    } catch (error) {
      // The lock could not be taken, or was lost while writing: nothing written under it is vouched for.
      failed = error;
      this.stale = true;
      for (const { batch } of written.splice(0)) this.fail(batch, error);
      // Not even locked (a permission error, a lock held for over a minute): tell the next batch's callers.
      if (!locked) this.fail(this.queue.splice(0, this.maxBatch), error);
    }
    for (const { batch, outcomes } of written) this.answer(batch, outcomes);
    this.lastFlushEndedAt = performance.now();
    if (this.queue.length > 0) this.scheduleFlush();
    if (!failed) await this.maybeCompact();
  }

  /**
   * Compact once the journal outgrows its threshold, in a lull: while writes keep coming (a burst,
   * where the queue empties between batches but refills within milliseconds) a snapshot only
   * competes with them for the CPU, so it waits until no write was asked for `compactLullMs`, checking
   * again then; a journal grown to four times the threshold is compacted at once all the same.
   */
  private async maybeCompact(closing = false): Promise<void> {
    const threshold = Math.max(this.compactMinBytes, this.snapshotBytes);
    if (this.compacting || this.applied <= threshold || (this.status !== 'open' && !closing)) return;
    // Quiet since the later of the last write asked for and the last flush's end: a flush slower
    // than the lull (a slow disk, another process holding the lock) is no pause.
    const quietFor = performance.now() - Math.max(this.lastWriteAskedAt, this.lastFlushEndedAt);
    if (!closing && this.applied <= 4 * threshold && (this.queue.length > 0 || quietFor < this.compactLullMs)) {
      this.lullCheck ??= setTimeout(() => {
        this.lullCheck = undefined;
        void this.exclusive(() => this.maybeCompact());
      }, this.compactLullMs - Math.max(0, quietFor)).unref();
      return;
    }
    // The batches before are durable and answered; a failed compaction only delays the next one.
    try {
      const sealed = await this.lock.with(() => this.seal());
      // Written while the next batches go on: nobody waits for it.
      void this.startSnapshot(sealed).catch((error: unknown) => this.compactionFailed(error));
    } catch (error) {
      this.stale = true;
      this.compactionFailed(error);
    }
  }

  private answer(batch: Pending[], outcomes: Settled[]): void {
    batch.forEach((item, i) => {
      const outcome = outcomes[i] as Settled;
      if (outcome.ok) item.resolve(outcome.value);
      else item.reject(outcome.error);
    });
  }

  private fail(batch: Pending[], error: unknown): void {
    const failure = error instanceof StoreError ? error : new StoreError(`Cannot write to the store ${this.dir}: ${(error as Error).message}`, { cause: error });
    for (const item of batch) item.reject(failure);
  }

  /** Under the lock: catch up (when `catchUp`), apply each op, append the changed ones in one write, fsync. */
  private async writeBatch(batch: Pending[], catchUp: boolean): Promise<Settled[]> {
    // Later batches of one hold check the journal's size (one fstat) rather than trust the hold.
    if (catchUp || this.stale || !this.journal || sizeOf(this.journal) !== this.applied) await this.sync(true);
    const journal = this.journal ?? (await this.createJournal());
    const lines: string[] = [];
    let end = this.applied;
    const outcomes = batch.map((item): Settled => {
      let encoded;
      try {
        encoded = encodeOp(item.op, this.gen, end);
      } catch (error) {
        return { ok: false, error };
      }
      const result = this.state.apply(encoded.applied);
      if (result.changed) {
        lines.push(encoded.line);
        end += encoded.bytes;
      }
      return { ok: true, value: result.value };
    });
    if (lines.length > 0) {
      // Positional write at the end we caught up to: only the lock keeps another process from
      // writing the same bytes (the unsafeNoLock test shows it).
      try {
        await writeJournalAt(journal, Buffer.from(lines.join('')), this.applied);
      } catch (error) {
        // Callers will be told it failed: take back what may have reached the file, durably (with
        // O_DSYNC a part that was written is already on disk, and must not come back after a crash).
        await truncateDurably(journal, this.applied).catch(() => undefined);
        throw error;
      }
      this.applied = this.seen = end;
    }
    return outcomes;
  }

  // Reading the files (always under the lock).

  /** Bring the state up to the files. For a write, also cut an unfinished last line away. */
  private async sync(forWrite: boolean): Promise<void> {
    const snapshot = fileVersion(this.snapshotPath);
    if (this.stale || snapshot.version !== this.snapshotVersion) await this.reload();
    else await this.catchUp();
    if (forWrite && this.seen > this.applied && this.journal) {
      await truncateDurably(this.journal, this.applied);
      this.logger.warn(
        { file: this.journalPath(this.gen), bytes: this.seen - this.applied },
        'Removed an unfinished last line from the store journal (a writer stopped mid-append; that write was never acknowledged)',
      );
      this.seen = this.applied;
    }
  }

  /** Cheap check, without the lock, whether another process wrote since we last looked. */
  private async changedOnDisk(): Promise<boolean> {
    if (this.stale) return true;
    if (fileVersion(this.snapshotPath).version !== this.snapshotVersion) return true;
    this.journal ??= await openExisting(this.journalPath(this.gen), JOURNAL_FLAGS);
    return this.journal !== undefined && sizeOf(this.journal) !== this.seen;
  }

  /**
   * Load snapshot.json and replay the journal from its segment on, following seals to the current
   * segment (`catchUp` from byte 0), replacing the state. Stale until it has finished, so that a
   * damaged file met on the way leaves nothing half-read for the next read or write to use.
   */
  private async reload(): Promise<void> {
    this.stale = true;
    const snapshotFile = fileVersion(this.snapshotPath);
    const snapshot = snapshotFile.version === 'absent' ? undefined : await readSnapshot(this.dir);
    await this.journal?.close();
    // Segment numbers start again in a store folder replaced from a backup: their files are others.
    await this.readers.clear();
    this.state = new StoreState(snapshot?.data ?? emptyStateData());
    this.snapshotGen = snapshot?.journalGeneration ?? 0;
    this.useSegment(this.snapshotGen, undefined, 0, 0, snapshotFile);
    await this.catchUp();
    this.stale = false;
  }

  /** Apply what other processes appended since we last read, following seals to the current segment. */
  private async catchUp(): Promise<void> {
    for (;;) {
      this.journal ??= await openExisting(this.journalPath(this.gen), JOURNAL_FLAGS);
      if (!this.journal) return;
      const size = sizeOf(this.journal);
      if (size === this.applied) {
        this.seen = size;
        return;
      }
      // Lines are never removed below what was applied, except by a reload-worthy event.
      if (size < this.applied) return this.reload();
      const decoded = this.decode(await readRange(this.journal, this.applied, size), this.applied, this.gen);
      for (const op of decoded.ops) this.state.apply(op);
      this.applied += decoded.bytes;
      this.seen = size;
      if (!decoded.sealed) break;
      // Another process compacted: its writes go on in the next segment.
      await this.journal.close();
      this.journal = undefined;
      this.gen += 1;
      this.applied = this.seen = 0;
    }
    this.warnTornTail();
  }

  private decode(chunk: Buffer, base: number, gen: number): ReturnType<typeof decodeJournal> {
    try {
      return decodeJournal(chunk, base, gen);
    } catch (error) {
      if (!(error instanceof CorruptLineError)) throw error;
      throw new StoreError(
        `Cannot read the store: ${this.journalPath(gen)} has a damaged line at byte ${error.offset} (${error.reason}). ` +
          'No file was changed. Stop every process using the store, then run `checkout-kit store check` to see what a ' +
          'recovery would keep and drop, and `checkout-kit store recover` to go back to the last good line (it keeps a backup), ' +
          'or restore the folder from a backup.',
        { cause: error },
      );
    }
  }

  /**
   * A last line without its newline was cut short by a crash mid-append. Its write never
   * finished, so it was never acknowledged: ignore it (the next write removes it).
   */
  private warnTornTail(): void {
    if (this.seen === this.applied || this.tornWarnedAt === this.applied) return;
    this.tornWarnedAt = this.applied;
    this.logger.warn(
      { file: this.journalPath(this.gen), bytes: this.seen - this.applied },
      'Ignoring an unfinished last line of the store journal (a writer stopped mid-append; that write was never acknowledged)',
    );
  }

  // Compaction.

  /**
   * Under the lock: close the current segment with a seal line and start the next one. Returns a
   * view of the state at the seal, which is what the snapshot of the next generation holds.
   */
  private async seal(): Promise<Sealed> {
    await this.sync(true);
    const journal = this.journal ?? (await this.createJournal());
    const line = Buffer.from(encodeSeal(this.gen));
    try {
      await writeJournalAt(journal, line, this.applied);
    } catch (error) {
      await truncateDurably(journal, this.applied).catch(() => undefined);
      throw error;
    }
    const gen = this.gen + 1;
    const next = await open(this.journalPath(gen), JOURNAL_FLAGS | constants.O_CREAT | constants.O_TRUNC, 0o644);
    await fsyncDir(this.dir);
    await journal.close();
    this.useSegment(gen, next, 0, 0, { version: this.snapshotVersion, size: this.snapshotBytes });
    return { gen, state: this.state.freeze(), basedOn: this.snapshotVersion };
  }

  /** Write the snapshot of `sealed` in the background; `compacting` until it is done. */
  private startSnapshot(sealed: Sealed): Promise<void> {
    const done = this.snapshotSealed(sealed);
    this.compacting = done.catch(() => undefined).finally(() => (this.compacting = undefined));
    return done;
  }

  /**
   * Write the snapshot of a seal (without the lock: nothing it reads changes), then, under the
   * lock, put it in place unless another process's compaction replaced snapshot.json meanwhile,
   * and delete the segments no body refers to any more.
   */
  private async snapshotSealed(sealed: Sealed): Promise<void> {
    let prepared: string;
    try {
      prepared = await prepareSnapshot(this.dir, sealed.gen, sealed.state);
    } finally {
      sealed.state.release();
    }
    await this.exclusive(() =>
      this.lock.with(async () => {
        if (fileVersion(this.snapshotPath).version !== sealed.basedOn) {
          await unlink(prepared).catch(() => undefined);
          return;
        }
        await installSnapshot(this.dir, prepared);
        const installed = fileVersion(this.snapshotPath);
        // Our state is the snapshot plus the segments after the seal: nothing to reload.
        if (this.snapshotVersion === sealed.basedOn) {
          this.snapshotGen = sealed.gen;
          this.snapshotVersion = installed.version;
          this.snapshotBytes = installed.size;
        }
        await this.deleteUnusedSegments(sealed.gen);
      }),
    );
  }

  private compactionFailed(error: unknown): void {
    this.logger.error({ dir: this.dir, err: error }, 'Store compaction failed; the journal keeps growing until one succeeds');
  }

  /** Delete the segments before `below` (their ops are in the snapshot) that hold no body of the state. */
  private async deleteUnusedSegments(below: number): Promise<void> {
    const used = this.state.bodySegments();
    const unused = (await readdir(this.dir)).filter((name) => {
      const gen = Number(JOURNAL_FILE.exec(name)?.[1] ?? NaN);
      return gen < below && !used.has(gen);
    });
    try {
      for (const name of unused) await unlink(join(this.dir, name));
      if (unused.length > 0) await fsyncDir(this.dir);
    } finally {
      // After the deletions (a read opening one meanwhile is let go too), even a failed one: a
      // handle kept open would keep a deleted segment's disk space.
      await this.readers.forget(unused.map((name) => Number(JOURNAL_FILE.exec(name)?.[1])));
    }
  }

  // Helpers.

  private useSegment(gen: number, journal: FileHandle | undefined, applied: number, seen: number, snapshot: { version: string; size: number }): void {
    this.gen = gen;
    this.journal = journal;
    this.applied = applied;
    this.seen = seen;
    this.snapshotVersion = snapshot.version;
    this.snapshotBytes = snapshot.size;
  }

  private async createJournal(): Promise<FileHandle> {
    const journal = await open(this.journalPath(this.gen), JOURNAL_FLAGS | constants.O_CREAT, 0o644);
    await fsyncDir(this.dir);
    this.journal = journal;
    return journal;
  }

  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const result = this.chain.then(fn);
    this.chain = result.catch(() => undefined);
    return result;
  }

  private get snapshotPath(): string {
    return join(this.dir, SNAPSHOT_FILE);
  }

  private journalPath(gen: number): string {
    return join(this.dir, journalName(gen));
  }

  private assertOpen(): void {
    if (this.status !== 'open') throw this.notOpen();
  }

  private notOpen(): StoreError {
    return new StoreError(`The store ${this.dir} is ${this.status === 'new' ? 'not open yet: call open() first' : 'closed'}.`);
  }
}

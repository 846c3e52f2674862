import { mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { Low } from 'lowdb';
import { JSONFile } from 'lowdb/node';
import { z } from 'zod';
import { ConfigError, printable, StoreError } from '../errors/index.js';
import { DirLock } from './dir-lock.js';
import { emptyData, type SandboxData } from './records.js';

/** File of the sandbox state inside the data directory. */
export const STATE_FILE = 'sandbox.json';
/** The lock a running sandbox holds on its data directory (the kernel's: a killed sandbox's goes with it). */
export const LOCK_FILE = 'sandbox.lock';

/** A list of records in the file: objects, whatever their fields (the sandbox wrote them). */
const records = z.array(z.record(z.string(), z.unknown()));

/**
 * The top level of `sandbox.json`, each field optional (a missing one starts empty): enough to
 * refuse a file that parses but is not sandbox state before any route trips over it. A `Record`
 * over the fields, so a field added to `SandboxData` without a check here is a compile error.
 */
const SandboxFileSchema = z
  .object({
    version: z.literal(1),
    webhookSecret: z.string(),
    seq: z.number().int().nonnegative(),
    partners: records,
    merchants: records,
    payments: records,
    invoices: records,
    idempotency: records,
    events: records,
    deliveries: records,
  } satisfies Record<keyof SandboxData, z.ZodType>)
  .partial();

/** Why `data` (parsed from the file) is not sandbox state, or undefined when it is. */
function notSandboxState(data: unknown): string | undefined {
  const parsed = SandboxFileSchema.safeParse(data);
  if (parsed.success) return undefined;
  const issue = parsed.error.issues[0]!;
  return issue.path.length > 0 ? `${issue.path.join('.')}: ${issue.message}` : issue.message;
}

/**
 * The sandbox's persisted state: one lowdb JSON file (never `JSONFilePreset`, which turns into
 * memory under NODE_ENV=test), locked so two sandboxes cannot share a data directory. The lock
 * is the store's kind (`DirLock`): the kernel drops it when its sandbox dies, so a SIGKILLed
 * sandbox starts again at once (proper-lockfile's directory made it wait ten seconds).
 * Changes are made synchronously on `data` and then `commit()`ed; the write is atomic (temp file
 * and rename), so the file never holds half a record. Commits are grouped: one write at a time,
 * and every commit made meanwhile shares the next one. (lowdb's writer, steno, chains a write's
 * promise to every write queued behind it, so under a steady stream of commits (deliveries are
 * recorded one by one) the first caller waited until the stream stopped: a simulation call under
 * a storm went unanswered for over a minute.)
 */
export class SandboxState {
  /** The write in progress (settled when none). */
  private writing: Promise<void> = Promise.resolve();
  /** The write that will start after it, shared by every commit made meanwhile; resolves with `resets` as the write began. */
  private queued: Promise<number> | undefined;
  /** How many times a failed write had memory read back from the file (undoing changes not yet written). */
  private resets = 0;
  /** Set when a failed write could not even read the file back: memory may hold changes reported lost. */
  private broken: StoreError | undefined;
  private closing = false;

  private constructor(
    private readonly db: Low<SandboxData>,
    readonly file: string,
    private readonly release: () => Promise<void>,
  ) {}

  static async open(dataDir: string): Promise<SandboxState> {
    const dir = resolve(dataDir);
    await mkdir(dir, { recursive: true }).catch((cause: NodeJS.ErrnoException) => {
      // mkdir's own EEXIST / ENOTDIR names neither the folder nor what to do.
      throw cause.code === 'EEXIST' || cause.code === 'ENOTDIR'
        ? new ConfigError(`${dir} (or a folder above it) is a file, not a folder: pass a folder as --data.`, { cause })
        : cause;
    });
    const file = join(dir, STATE_FILE);
    const lock = new DirLock(dir, { name: LOCK_FILE, subject: 'the sandbox data', staleMs: 10_000, disabled: false, onCompromised: () => undefined });
    const held = await lock.tryAcquire().catch(async (error: unknown) => {
      await lock.close();
      throw new ConfigError((error as Error).message, { cause: error });
    });
    if (!held) {
      await lock.close();
      throw new ConfigError(`${dir} is in use by another sandbox (lock ${join(dir, LOCK_FILE)}). Stop it, or pass another --data directory.`);
    }
    const release = async () => {
      await held();
      await lock.close();
    };
    const db = new Low<SandboxData>(new JSONFile<SandboxData>(file), emptyData());
    try {
      await db.read();
    } catch (error) {
      await release();
      throw new ConfigError(`${file} is not valid sandbox state (${printable((error as Error).message)}). Delete it or pass another --data directory.`, {
        cause: error,
      });
    }
    const wrong = notSandboxState(db.data);
    if (wrong !== undefined) {
      await release();
      throw new ConfigError(`${file} is not valid sandbox state (${printable(wrong)}). It was left untouched: delete it or pass another --data directory.`);
    }
    db.data = { ...emptyData(), ...db.data };
    return new SandboxState(db, file, release);
  }

  get data(): SandboxData {
    return this.db.data;
  }

  /**
   * Persist `data`: resolves once a write that began after this call has finished, never waiting
   * for later ones. On failure memory is reset to what the file holds, so nothing half-made
   * survives; a commit whose change that reset undid fails too, rather than report it kept.
   */
  commit(): Promise<void> {
    if (this.closing) return Promise.reject(new StoreError(`The sandbox state ${this.file} is closed: nothing more is written.`));
    const asOf = this.resets;
    if (!this.queued) {
      const queued = this.writing.then(async () => {
        // From here on, changes go into the next write.
        this.queued = undefined;
        const resetsAtWrite = this.resets;
        await this.writeNow();
        return resetsAtWrite;
      });
      this.queued = queued;
      this.writing = queued.then(
        () => undefined,
        () => undefined,
      );
    }
    return this.queued.then((resetsAtWrite) => {
      if (resetsAtWrite !== asOf)
        throw new StoreError(
          `could not write ${this.file}: an earlier write failed and the state was read back from the file, which undid this change. Try again.`,
        );
    });
  }

  private async writeNow(): Promise<void> {
    if (this.broken) throw this.broken;
    try {
      await this.db.write();
    } catch (error) {
      try {
        // Straight from the adapter: `Low.read()` keeps memory as it is when there is no file yet.
        const onDisk = await this.db.adapter.read();
        this.db.data = { ...emptyData(), ...(onDisk ?? {}) };
        this.resets += 1;
      } catch (readError) {
        // Memory still holds what the callers are told was not kept: write nothing more.
        this.broken = new StoreError(
          `could not write ${this.file} (${(error as Error).message}) nor read it back (${(readError as Error).message}); the sandbox writes nothing more. Restart it.`,
          { cause: readError },
        );
      }
      throw new StoreError(`could not write ${this.file}: ${(error as Error).message}`, { cause: error });
    }
  }

  /** Write once more and release the directory lock. */
  async close(): Promise<void> {
    this.closing = true;
    try {
      await this.writing;
      if (!this.broken) await this.db.write();
    } finally {
      await this.release().catch(() => undefined);
    }
  }
}

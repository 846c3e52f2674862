import { lstat, open, rmdir, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import lockfile from 'proper-lockfile';
import { StoreError } from '../../errors/index.js';
import { kernelLocks, type KernelLocks } from './kernel-locks.js';

export interface DirLockOptions {
  /**
   * Directory locks only (see `DirLock`): one not refreshed for this long belongs to a dead
   * process and is taken over. A kernel lock needs no such guess.
   */
  staleMs: number;
  /** Skip locking entirely (tests proving what the lock protects). */
  disabled: boolean;
  /** Directory locks only: this process stalled past `staleMs` and another took its lock over. */
  onCompromised(error: Error): void;
  /** The kernel's file locks could not be loaded here, so the directory lock is used (said once per lock). */
  onFallback?(error: Error): void;
  /** Tests only: use the directory lock even where the kernel's are available. @default 'auto' */
  mechanism?: 'auto' | 'directory';
}

export const LOCK_NAME = 'store.lock';

/** How long a writer waits for another process's lock before reporting it stuck. */
const ACQUIRE_TIMEOUT_MS = 60_000;
/** Longest pause between two tries for a held lock. */
const MAX_POLL_MS = 50;

/** Undoes a successful try; `undefined` from a try means another holder has it. */
type Release = () => Promise<void>;

/**
 * The cross-process lock of a store folder. Every read of another process's writes and every
 * append happens while holding it.
 *
 * Where it can, it is a kernel lock on the file `store.lock` (fs-native-extensions): the kernel
 * drops it the moment its holder dies, so no process ever has to judge another dead and take
 * its lock over. That judgement is what went wrong before: with proper-lockfile's directory lock,
 * several processes taking over a SIGKILLed holder's stale lock at once could each remove the
 * other's fresh one, and two of them then wrote the journal together. Where the addon cannot be
 * loaded (no prebuilt binary for the platform) the directory lock remains, with that weakness.
 */
export class DirLock {
  private compromised: Error | undefined;
  private readonly kernel: KernelLocks | undefined;
  /** The open `store.lock` whose kernel lock is taken and dropped (kept open: closing it drops the lock). */
  private file: Promise<FileHandle | undefined> | undefined;
  /** A kernel lock is re-entrant on one open file: this keeps one instance's holders apart as well. */
  private held = false;

  constructor(
    private readonly dir: string,
    private readonly options: DirLockOptions,
  ) {
    const locks = options.mechanism === 'directory' ? undefined : kernelLocks();
    if (locks instanceof Error) options.onFallback?.(locks);
    this.kernel = locks instanceof Error ? undefined : locks;
  }

  /** Which lock this is: for logs and `check`. */
  get mechanism(): 'kernel' | 'directory' {
    return this.kernel ? 'kernel' : 'directory';
  }

  /** Whether the lock held now was taken over (a directory lock whose process stalled past the stale time). */
  get lost(): boolean {
    return this.compromised !== undefined;
  }

  /** Run `fn` holding the lock. */
  async with<T>(fn: () => Promise<T>): Promise<T> {
    if (this.options.disabled) return fn();
    const release = await this.acquire();
    try {
      const result = await fn();
      // A holder that lost its lock (stalled past `staleMs`) must not report success.
      if (this.compromised) throw new StoreError(`Lost the lock on ${this.dir} while writing: ${this.compromised.message}. Retry the operation.`);
      return result;
    } finally {
      await release().catch(() => undefined);
    }
  }

  /** Close the lock file (a store being closed). A later `with` opens it again. */
  async close(): Promise<void> {
    const file = this.file;
    this.file = undefined;
    await (await file?.catch(() => undefined))?.close();
  }

  private async acquire(): Promise<Release> {
    this.compromised = undefined;
    // Holders keep it for one group commit (about a millisecond), or a compaction (up to seconds
    // at 100,000 events): poll fast, back off to 50 ms, give up after about a minute.
    const deadline = performance.now() + ACQUIRE_TIMEOUT_MS;
    for (let attempt = 0; ; attempt += 1) {
      let release: Release | undefined;
      try {
        release = this.kernel ? await this.tryKernel(this.kernel) : await this.tryDirectory();
      } catch (error) {
        throw new StoreError(`Cannot lock the store ${this.dir}: ${(error as Error).message}. Check that the folder is writable.`, { cause: error });
      }
      if (release) return release;
      if (performance.now() >= deadline) {
        throw new StoreError(
          `Cannot lock the store ${this.dir}: another process has held ${LOCK_NAME} for over a minute. ` +
            (this.kernel
              ? `Look for a stuck checkout-kit process using this folder (\`fuser ${join(this.dir, LOCK_NAME)}\` names it).`
              : `Look for a stuck checkout-kit process (a dead one's lock is taken over after ${this.options.staleMs} ms).`),
        );
      }
      const wait = Math.min(MAX_POLL_MS, 1.5 ** attempt) * (0.5 + Math.random());
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }

  private async tryKernel(locks: KernelLocks): Promise<Release | undefined> {
    if (this.held) return undefined;
    this.file ??= this.openLockFile();
    const file = await this.file.catch((error: unknown) => {
      this.file = undefined;
      throw error;
    });
    if (!file) {
      this.file = undefined;
      return undefined;
    }
    if (this.held || !locks.tryLock(file.fd)) return undefined;
    this.held = true;
    return async () => {
      this.held = false;
      locks.unlock(file.fd);
    };
  }

  /**
   * `store.lock` opened for writing (a write lock needs it), or `undefined` while a directory lock
   * of an earlier version is there: a live one is waited for, a stale one (its process died) removed.
   */
  private async openLockFile(): Promise<FileHandle | undefined> {
    const path = join(this.dir, LOCK_NAME);
    try {
      return await open(path, 'a');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EISDIR') throw error;
      const stat = await lstat(path).catch(() => undefined);
      if (stat && stat.mtimeMs < Date.now() - this.options.staleMs) {
        await rmdir(path).catch((removing: NodeJS.ErrnoException) => {
          if (removing.code !== 'ENOENT' && removing.code !== 'ENOTEMPTY') throw removing;
        });
      }
      return undefined;
    }
  }

  private async tryDirectory(): Promise<Release | undefined> {
    try {
      return await lockfile.lock(this.dir, {
        lockfilePath: join(this.dir, LOCK_NAME),
        realpath: false,
        stale: this.options.staleMs,
        // The retry loop is ours: proper-lockfile's `retries` builds its whole schedule (1,500
        // timeouts) on every call, which cost ~7% of serve's main thread under load.
        retries: 0,
        onCompromised: (error) => {
          this.compromised = error;
          this.options.onCompromised(error);
        },
      });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ELOCKED') return undefined;
      throw error;
    }
  }
}

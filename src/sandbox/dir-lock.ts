import { fstatSync, statSync } from 'node:fs';
import { lstat, open, rmdir, stat, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import lockfile from 'proper-lockfile';
import { StoreError } from '../errors/index.js';
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
  /** The kernel's file locks cannot be had here (no addon, or a filesystem without them), so the directory lock is used. */
  onFallback?(error: Error): void;
  /** Tests only: use the directory lock even where the kernel's are available. @default 'auto' */
  mechanism?: 'auto' | 'directory';
  /** The lock file's name in the folder. @default 'store.lock' */
  name?: string;
  /** What the folder is, for error messages. @default 'the store' */
  subject?: string;
}

export const LOCK_NAME = 'store.lock';

/** How long a writer waits for another process's lock before reporting it stuck. */
const ACQUIRE_TIMEOUT_MS = 60_000;
/** Longest pause between two tries for a held lock. */
const MAX_POLL_MS = 50;
/** A filesystem that has no kernel locks (some FUSE and network mounts) answers a try with these. */
const NO_KERNEL_LOCKS = new Set(['ENOLCK', 'EOPNOTSUPP', 'ENOTSUP', 'ENOSYS']);

/** Undoes a successful try; `undefined` from a try means another holder has it. */
type Release = () => Promise<void>;

/** The open `store.lock` and the file it was when opened (to notice it being replaced). */
interface LockFile {
  handle: FileHandle;
  ino: number;
  dev: number;
}

/**
 * The cross-process lock of a store folder. Every read of another process's writes and every
 * append happens while holding it.
 *
 * Where it can, it is a kernel lock on the file `store.lock` (fs-native-extensions): the kernel
 * drops it the moment its holder dies, so no process ever has to judge another dead and take
 * its lock over. That judgement is what went wrong before: with proper-lockfile's directory lock,
 * several processes taking over a SIGKILLed holder's stale lock at once could each remove the
 * other's fresh one, and two of them then wrote the journal together. Where kernel locks cannot be
 * had (no prebuilt addon for the platform, a filesystem without them) the directory lock remains,
 * with that weakness. Processes of both kinds on one folder are not supported: they refuse each
 * other's `store.lock` with an error, rather than write together.
 */
export class DirLock {
  private compromised: Error | undefined;
  private kernel: KernelLocks | undefined;
  /** The open `store.lock` whose kernel lock is taken and dropped (kept open: closing it drops the lock). */
  private file: Promise<LockFile | undefined> | undefined;
  /** A kernel lock is re-entrant on one open file: this keeps one instance's holders apart as well. */
  private held = false;
  private closed = false;
  private readonly name: string;
  private readonly subject: string;

  constructor(
    private readonly dir: string,
    private readonly options: DirLockOptions,
  ) {
    this.name = options.name ?? LOCK_NAME;
    this.subject = `${options.subject ?? 'the store'} ${dir}`;
    const locks = options.mechanism === 'directory' ? undefined : kernelLocks();
    if (locks instanceof Error) options.onFallback?.(locks);
    this.kernel = locks instanceof Error ? undefined : locks;
  }

  /** Which lock this is (for logs and tests). */
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

  /** Close the lock file for good (its store is closing); a holder's release closes it if one is inside now. */
  async close(): Promise<void> {
    this.closed = true;
    await this.closeFile();
  }

  /** Close the lock file until the next `with` (a store whose opening failed). */
  async closeFile(): Promise<void> {
    if (this.held) return;
    const file = this.file;
    this.file = undefined;
    await (await file?.catch(() => undefined))?.handle.close();
  }

  private assertOpen(): void {
    if (this.closed) throw new StoreError(`The lock of ${this.subject} was closed with its store: open the store again.`);
  }

  /** One try, without waiting: the lock's release, or `undefined` while another holder has it. */
  async tryAcquire(): Promise<Release | undefined> {
    this.assertOpen();
    this.compromised = undefined;
    try {
      return this.kernel ? await this.tryKernel(this.kernel) : await this.tryDirectory();
    } catch (error) {
      if (error instanceof StoreError) throw error;
      const code = (error as NodeJS.ErrnoException).code ?? '';
      const advice = ['EACCES', 'EPERM', 'EROFS'].includes(code)
        ? `Check that this user may write the folder and ${this.name} in it (a folder used under another user, e.g. with sudo, may need a chown)`
        : 'Check the folder';
      throw new StoreError(`Cannot lock ${this.subject}: ${(error as Error).message}. ${advice}.`, { cause: error });
    }
  }

  private async acquire(): Promise<Release> {
    // Holders keep it for one group commit (about a millisecond), or a compaction (up to seconds
    // at 100,000 events): poll fast, back off to 50 ms, give up after about a minute.
    const deadline = performance.now() + ACQUIRE_TIMEOUT_MS;
    for (let attempt = 0; ; attempt += 1) {
      const release = await this.tryAcquire();
      if (release) return release;
      this.assertOpen();
      if (performance.now() >= deadline) {
        throw new StoreError(
          `Cannot lock ${this.subject}: another process has held ${this.name} for over a minute. ` +
            (this.kernel
              ? `Look for a stuck checkout-kit process using this folder (\`fuser ${join(this.dir, this.name)}\` names it).`
              : `Look for a stuck checkout-kit process (a dead one's lock is taken over after ${this.options.staleMs} ms).`),
        );
      }
      const wait = Math.min(MAX_POLL_MS, 1.5 ** attempt) * (0.5 + Math.random());
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }

  private async tryKernel(locks: KernelLocks): Promise<Release | undefined> {
    if (this.held) return undefined;
    const opening = (this.file ??= this.openLockFile());
    const file = await opening.catch((error: unknown) => {
      if (this.file === opening) this.file = undefined;
      throw error;
    });
    this.assertOpen();
    if (!file || this.file !== opening) {
      if (this.file === opening) this.file = undefined;
      return undefined;
    }
    if (this.held) return undefined;
    let taken: boolean;
    try {
      taken = locks.tryLock(file.handle.fd);
    } catch (error) {
      if (!NO_KERNEL_LOCKS.has((error as NodeJS.ErrnoException).code ?? '')) throw error;
      // This filesystem has no kernel locks: the directory lock is all there is.
      this.kernel = undefined;
      await this.closeFile();
      this.options.onFallback?.(error as Error);
      return undefined;
    }
    if (!taken) return undefined;
    if (!this.isStill(file)) {
      // Someone deleted or replaced store.lock: its lock guards nothing now. Open the new one.
      locks.unlock(file.handle.fd);
      await this.closeFile();
      return undefined;
    }
    this.held = true;
    return async () => {
      locks.unlock(file.handle.fd);
      this.held = false;
      if (this.closed) await this.closeFile();
    };
  }

  /** Whether the lock file (`name`) is still the file this lock has open. */
  private isStill(file: LockFile): boolean {
    try {
      const now = statSync(join(this.dir, this.name));
      return now.ino === file.ino && now.dev === file.dev;
    } catch {
      return false;
    }
  }

  /**
   * `store.lock` opened for writing (a write lock needs it), or `undefined` while a directory lock
   * of an earlier version is there: a live one is waited for, a stale one (its process died)
   * removed. Earlier versions must all be stopped before the upgrade: one taking over that stale
   * directory at the same moment could lose it to this removal.
   */
  private async openLockFile(): Promise<LockFile | undefined> {
    const path = join(this.dir, this.name);
    let handle: FileHandle;
    try {
      handle = await open(path, 'a');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EISDIR') throw error;
      const found = await lstat(path).catch(() => undefined);
      if (found?.isDirectory() && found.mtimeMs < Date.now() - this.options.staleMs) {
        await rmdir(path).catch((removing: NodeJS.ErrnoException) => {
          // Gone, or already replaced by another process's lock file or a fresh directory: try again.
          if (!['ENOENT', 'ENOTDIR', 'EEXIST', 'ENOTEMPTY'].includes(removing.code ?? '')) throw removing;
        });
      }
      return undefined;
    }
    const { ino, dev, uid } = fstatSync(handle.fd);
    await this.giveToFolderOwner(handle, uid);
    return { handle, ino, dev };
  }

  /**
   * A lock file created by root (`sudo checkout-kit store check`) would lock the service's own
   * user out of its store: root hands it to the folder's owner.
   */
  private async giveToFolderOwner(handle: FileHandle, fileUid: number): Promise<void> {
    if (process.getuid?.() !== 0 || fileUid !== 0) return;
    const folder = await stat(this.dir);
    if (folder.uid === 0) return;
    await handle.chown(folder.uid, folder.gid);
  }

  private async tryDirectory(): Promise<Release | undefined> {
    try {
      return await lockfile.lock(this.dir, {
        lockfilePath: join(this.dir, this.name),
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
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ELOCKED') return undefined;
      if (code === 'ENOTDIR') {
        throw new StoreError(
          `Cannot lock ${this.subject}: ${this.name} is the lock file of a process using kernel locks, and this one cannot (no kernel locks on this platform or filesystem). ` +
            'Run every process of this store on one kind of platform; once none runs, removing the file lets this one in.',
          { cause: error },
        );
      }
      throw error;
    }
  }
}

import { constants, fstatSync, readSync, statSync } from 'node:fs';
import { mkdir, open, type FileHandle } from 'node:fs/promises';

export function isNotFound(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
}

/**
 * Create the folder `dir` (and those above it) if missing. When it, or a folder above it, is a
 * file, throws what `isAFile(cause)` makes: mkdir's own EEXIST / ENOTDIR names neither.
 */
export async function ensureFolder(dir: string, isAFile: (cause: Error) => Error): Promise<void> {
  await mkdir(dir, { recursive: true }).catch((error: NodeJS.ErrnoException) => {
    throw error.code === 'EEXIST' || error.code === 'ENOTDIR' ? isAFile(error) : error;
  });
}

/** Make a file's content durable. */
export async function fsyncFile(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Make creations, renames and deletions in `dir` durable. */
export async function fsyncDir(dir: string): Promise<void> {
  await fsyncFile(dir);
}

/**
 * On Linux journal segments are opened for writing with O_DSYNC: each write then returns once it
 * is as durable as a write followed by fdatasync, in one trip through the thread pool instead of
 * two (a group commit under load waits for each trip). Not on macOS, where Node's datasync is
 * F_FULLFSYNC (it also empties the drive's cache) and O_DSYNC is not, nor on Windows (no O_DSYNC):
 * there the write is followed by datasync.
 */
const JOURNAL_DSYNC = process.platform === 'linux' && constants.O_DSYNC !== undefined;
export const JOURNAL_FLAGS = constants.O_RDWR | (JOURNAL_DSYNC ? constants.O_DSYNC : 0);

/** Open a file that may not exist (`JOURNAL_FLAGS`: positional reads and writes; `r`: reads), or undefined. */
export async function openExisting(path: string, flags: 'r' | number): Promise<FileHandle | undefined> {
  try {
    return await open(path, flags);
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

/**
 * The size of an open file, read synchronously: fstat on a descriptor is one metadata syscall
 * (no disk I/O), so it costs less than the trip through the thread pool and back to the event
 * loop that `handle.stat()` takes, and a group commit under load waits for each such trip.
 */
export function sizeOf(handle: FileHandle): number {
  return fstatSync(handle.fd).size;
}

/** Cut an open file back to `length` bytes, durably: what was cut must not come back after a crash. */
export async function truncateDurably(handle: FileHandle, length: number): Promise<void> {
  await handle.truncate(length);
  await handle.datasync();
}

/** Read bytes `[from, to)` of an open file. */
export async function readRange(handle: FileHandle, from: number, to: number): Promise<Buffer> {
  const buffer = Buffer.allocUnsafe(to - from);
  let filled = 0;
  while (filled < buffer.length) {
    const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, from + filled);
    if (bytesRead === 0) return buffer.subarray(0, filled);
    filled += bytesRead;
  }
  return buffer;
}

/** `readRange` without the thread pool: for bytes most likely in the kernel's page cache (written lately), where that costs the event loop less than the trip. */
export function readRangeSync(handle: FileHandle, from: number, to: number): Buffer {
  const buffer = Buffer.allocUnsafe(to - from);
  let filled = 0;
  while (filled < buffer.length) {
    const bytesRead = readSync(handle.fd, buffer, filled, buffer.length - filled, from + filled);
    if (bytesRead === 0) return buffer.subarray(0, filled);
    filled += bytesRead;
  }
  return buffer;
}

/** Write all of `buffer` at byte `position`. */
async function writeAt(handle: FileHandle, buffer: Buffer, position: number): Promise<void> {
  let written = 0;
  while (written < buffer.length) {
    const { bytesWritten } = await handle.write(buffer, written, buffer.length - written, position + written);
    written += bytesWritten;
  }
}

/** Write all of `buffer` at `position` of a journal segment opened with `JOURNAL_FLAGS`, durably (datasync where O_DSYNC is not used). */
export async function writeJournalAt(handle: FileHandle, buffer: Buffer, position: number): Promise<void> {
  await writeAt(handle, buffer, position);
  if (!JOURNAL_DSYNC) await handle.datasync();
}

/**
 * What identifies one version of a file that is only ever replaced by rename: inode, size and mtime
 * (ns). Read synchronously, as `sizeOf`: a stat of a path in a folder just used is one metadata
 * syscall answered from the kernel's caches, and each read and each group commit asks it; a trip
 * through the thread pool instead cost the event loop more (on two busy cores the woken worker
 * takes the loop's core) than the syscall itself.
 */
export function fileVersion(path: string): { version: string; size: number } {
  try {
    // Not `throwIfNoEntry: false`: newer Node versions also answer undefined for ENOTDIR (a folder
    // on the path turned into a file), which must stay an error, not an absent snapshot.
    const info = statSync(path, { bigint: true });
    return { version: `${info.ino}:${info.size}:${info.mtimeNs}`, size: Number(info.size) };
  } catch (error) {
    if (isNotFound(error)) return { version: 'absent', size: 0 };
    throw error;
  }
}

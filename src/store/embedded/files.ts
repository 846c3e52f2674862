import { open, stat, type FileHandle } from 'node:fs/promises';

export function isNotFound(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
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

/** Open a file that may not exist (`r+`: positional reads and writes; `r`: reads), or undefined. */
export async function openExisting(path: string, flags: 'r' | 'r+'): Promise<FileHandle | undefined> {
  try {
    return await open(path, flags);
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
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

/** Write all of `buffer` at byte `position`. */
export async function writeAt(handle: FileHandle, buffer: Buffer, position: number): Promise<void> {
  let written = 0;
  while (written < buffer.length) {
    const { bytesWritten } = await handle.write(buffer, written, buffer.length - written, position + written);
    written += bytesWritten;
  }
}

/** What identifies one version of a file that is only ever replaced by rename: inode, size and mtime (ns). */
export async function fileVersion(path: string): Promise<{ version: string; size: number }> {
  try {
    const info = await stat(path, { bigint: true });
    return { version: `${info.ino}:${info.size}:${info.mtimeNs}`, size: Number(info.size) };
  } catch (error) {
    if (isNotFound(error)) return { version: 'absent', size: 0 };
    throw error;
  }
}

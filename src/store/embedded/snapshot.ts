import { randomUUID } from 'node:crypto';
import { open, readdir, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { Low, type Adapter } from 'lowdb';
import { JSONFile } from 'lowdb/node';
import { printable, StoreError } from '../../errors/index.js';
import { STATE_MAPS, type FrozenState, type StateData } from '../state.js';
import { fsyncDir } from './files.js';

export const SNAPSHOT_FILE = 'snapshot.json';
const SNAPSHOT_VERSION = 1;

/** `snapshot.json`: the state up to the start of journal segment `journalGeneration`. */
export interface SnapshotFile {
  version: typeof SNAPSHOT_VERSION;
  journalGeneration: number;
  data: StateData;
}

/**
 * Read `dir/snapshot.json` through lowdb. Call only when the file exists: a file that cannot be
 * parsed, or is not a snapshot, is a StoreError that says what to do, and the file is not touched.
 */
export async function readSnapshot(dir: string): Promise<SnapshotFile> {
  const path = join(dir, SNAPSHOT_FILE);
  // Built by hand, never JSONFilePreset: the preset turns into memory when NODE_ENV=test.
  const db = new Low<unknown>(new JSONFile<unknown>(path), null);
  try {
    await db.read();
  } catch (error) {
    if (error instanceof SyntaxError) throw damaged(path, `not valid JSON: ${error.message}`, error);
    throw new StoreError(`Cannot read ${path}: ${(error as Error).message}. Check the folder's permissions.`, { cause: error });
  }
  if (!isSnapshot(db.data)) throw damaged(path, 'it is not a checkout-kit snapshot (version 1)');
  return db.data;
}

/**
 * Replace `dir/snapshot.json` so that a crash at any point leaves either the old or the new file
 * whole: `prepareSnapshot`, then `installSnapshot`.
 */
export async function writeSnapshot(dir: string, snapshot: Omit<SnapshotFile, 'version'>): Promise<void> {
  await installSnapshot(dir, await prepareSnapshot(dir, snapshot.journalGeneration, dataSource(snapshot.data)));
}

/** What a snapshot is written from: a `StoreState.freeze()`, or plain data (`dataSource`). */
export type SnapshotSource = Pick<FrozenState, 'entries' | 'deadLetters'>;

/** Plain state data as a snapshot source. */
export function dataSource(data: StateData): SnapshotSource {
  return { entries: (map) => Object.entries(data[map]), deadLetters: () => data.deadLetters };
}

/**
 * Write the snapshot of `source` (the state before journal segment `journalGeneration`) to a file
 * of its own next to `snapshot.json` and fsync it; returns its path. The JSON goes out a slice at a
 * time (`SlicedJSONFile`), so the event loop keeps serving acks while a large state is written: a
 * single `JSON.stringify` of 30,000 events held it for ~170 ms. `source` must not change meanwhile:
 * pass a `StoreState.freeze()`.
 */
export async function prepareSnapshot(dir: string, journalGeneration: number, source: SnapshotSource): Promise<string> {
  // A name of this process's own: two processes may compact at once (only one installs).
  const path = join(dir, `${SNAPSHOT_FILE}.${process.pid}-${randomUUID()}${NEXT_SUFFIX}`);
  try {
    await new Low<SnapshotWrite>(new SlicedJSONFile(path), { version: SNAPSHOT_VERSION, journalGeneration, source }).write();
  } catch (error) {
    await unlink(path).catch(() => undefined);
    throw error;
  }
  return path;
}

/** Put a prepared snapshot in place of `snapshot.json` (a rename, then fsync of the folder). */
export async function installSnapshot(dir: string, prepared: string): Promise<void> {
  await rename(prepared, join(dir, SNAPSHOT_FILE));
  await fsyncDir(dir);
}

const NEXT_SUFFIX = '.next';
/** Files `prepareSnapshot` writes, and `snapshot.json.next` of earlier versions. */
const PREPARED_FILE = /^snapshot\.json\.(?:(\d+)-[0-9a-f-]+)?\.?next$/;

/**
 * Delete the prepared snapshots that a process which is gone left behind (it crashed before
 * installing one). Call under the store lock; files of live processes are theirs to install.
 */
export async function deleteAbandonedSnapshots(dir: string): Promise<void> {
  for (const name of await readdir(dir)) {
    const match = PREPARED_FILE.exec(name);
    if (!match || (match[1] !== undefined && isAlive(Number(match[1])))) continue;
    await unlink(join(dir, name)).catch(() => undefined);
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Bytes gathered before each write: each write is a point where the event loop runs other work. */
const SLICE_BYTES = 128 * 1024;

/** A snapshot on its way to a file: the `SnapshotFile` fields, its data still to be read from `source`. */
interface SnapshotWrite {
  version: typeof SNAPSHOT_VERSION;
  journalGeneration: number;
  source: SnapshotSource;
}

/**
 * A lowdb adapter that writes a snapshot as compact JSON, the maps of its state an entry at a
 * time, handing the event loop back at every slice it writes; then fsyncs. The file parses to the
 * `SnapshotFile` lowdb's `JSONFile` reads back.
 */
class SlicedJSONFile implements Adapter<SnapshotWrite> {
  constructor(private readonly path: string) {}

  read(): Promise<SnapshotWrite | null> {
    throw new Error('SlicedJSONFile only writes: read snapshots with readSnapshot().');
  }

  async write({ version, journalGeneration, source }: SnapshotWrite): Promise<void> {
    const file = await open(this.path, 'w', 0o644);
    try {
      let parts = [`${JSON.stringify({ version, journalGeneration }).slice(0, -1)},"data":{"deadLetters":${JSON.stringify(source.deadLetters())}`];
      let size = 0;
      // Awaited only once a slice is gathered: an await per entry cost as much as the JSON.
      const add = (text: string) => {
        parts.push(text);
        size += text.length;
        return size >= SLICE_BYTES;
      };
      const flush = async () => {
        await file.write(parts.join(''));
        parts = [];
        size = 0;
      };
      for (const map of STATE_MAPS) {
        if (add(`,${JSON.stringify(map)}:{`)) await flush();
        let separator = '';
        for (const [key, value] of source.entries(map)) {
          if (add(`${separator}${JSON.stringify(key)}:${JSON.stringify(value)}`)) await flush();
          separator = ',';
        }
        add('}');
      }
      add('}}');
      await flush();
      await file.sync();
    } finally {
      await file.close();
    }
  }
}

function isSnapshot(value: unknown): value is SnapshotFile {
  if (typeof value !== 'object' || value === null) return false;
  const { version, journalGeneration, data } = value as Partial<SnapshotFile>;
  if (version !== SNAPSHOT_VERSION || !Number.isSafeInteger(journalGeneration) || (journalGeneration as number) < 0) return false;
  if (typeof data !== 'object' || data === null || !Array.isArray(data.deadLetters)) return false;
  return [data.events, data.runs, data.resources, data.attempts, data.locks].every((map) => typeof map === 'object' && map !== null && !Array.isArray(map));
}

function damaged(path: string, why: string, cause?: unknown): StoreError {
  return new StoreError(
    `Cannot open the store: ${path} is damaged (${printable(why)}). The file was left untouched. ` +
      'Restore the store folder from a backup, or move it aside to start with an empty store.',
    { cause },
  );
}

import { rename } from 'node:fs/promises';
import { join } from 'node:path';
import { Low } from 'lowdb';
import { DataFile, JSONFile } from 'lowdb/node';
import { StoreError } from '../../errors/index.js';
import type { StateData } from '../state.js';
import { fsyncDir, fsyncFile } from './files.js';

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
 * whole. lowdb writes `snapshot.json.next` (through a temp file and a rename, but without fsync);
 * we fsync it, rename it over `snapshot.json` and fsync the folder.
 */
export async function writeSnapshot(dir: string, snapshot: Omit<SnapshotFile, 'version'>): Promise<void> {
  const next = join(dir, `${SNAPSHOT_FILE}.next`);
  // Compact JSON, not JSONFile's two-space indent: a snapshot of 30,000 events is written while
  // writers wait, and the indent made it 38% larger and 28% slower to produce.
  const db = new Low<SnapshotFile>(new DataFile<SnapshotFile>(next, { parse: JSON.parse, stringify: (data) => JSON.stringify(data) }), { version: SNAPSHOT_VERSION, ...snapshot });
  await db.write();
  await fsyncFile(next);
  await rename(next, join(dir, SNAPSHOT_FILE));
  await fsyncDir(dir);
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
    `Cannot open the store: ${path} is damaged (${why}). The file was left untouched. ` +
      'Restore the store folder from a backup, or move it aside to start with an empty store.',
    { cause },
  );
}

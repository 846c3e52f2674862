/**
 * What the fault scenarios read of an embedded store's files directly, by SQLite's file format
 * (https://sqlite.org/fileformat2.html and walformat.html), without a driver: where a row's page
 * is, to damage it, and whether a checkpoint was cut short, from the WAL index.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { STORE_FILE } from '../../../src/store/sqlite/sqlite-store.js';

/** The database file of the embedded store in `dir`, and its WAL and WAL index beside it. */
export const storeFiles = (dir: string) => {
  const db = join(dir, STORE_FILE);
  return { db, wal: `${db}-wal`, shm: `${db}-shm` };
};

/** The page size a database file's header gives (bytes 16-17, big-endian; 1 means 65536). */
export function pageSize(bytes: Buffer): number {
  const size = bytes.readUInt16BE(16);
  return size === 1 ? 65_536 : size;
}

/** A table b-tree leaf page (the type byte at the start of its b-tree header). */
const TABLE_LEAF = 0x0d;

/**
 * The 1-based number of the table leaf page holding `needle` (a row's bytes, such as the start of
 * an event's body), or -1. Index pages, which may hold the same key, are passed over.
 */
export function tableLeafPageHolding(bytes: Buffer, needle: string): number {
  const size = pageSize(bytes);
  for (let at = bytes.indexOf(needle); at !== -1; at = bytes.indexOf(needle, at + 1)) {
    const page = Math.floor(at / size) + 1;
    const header = (page - 1) * size + (page === 1 ? 100 : 0);
    if (bytes[header] === TABLE_LEAF) return page;
  }
  return -1;
}

/** The state of the last checkpoint, from the WAL index (the `-shm` file) a process left behind. */
export interface CheckpointState {
  /** Frames in the WAL (`mxFrame` of the index header). */
  walFrames: number;
  /** Frames copied into the database by the last checkpoint that finished (`nBackfill`). */
  backfilled: number;
  /** Frames the last checkpoint set out to copy (`nBackfillAttempted`), written before it copies any. */
  attempted: number;
}

/**
 * Read the WAL index's header and checkpoint information (native byte order, little-endian here).
 * A checkpoint that started but did not finish leaves `attempted > backfilled`.
 */
export async function checkpointState(dir: string): Promise<CheckpointState | undefined> {
  const shm = await readFile(storeFiles(dir).shm).catch(() => undefined);
  if (!shm || shm.length < 136) return undefined;
  return { walFrames: shm.readUInt32LE(16), backfilled: shm.readUInt32LE(96), attempted: shm.readUInt32LE(128) };
}

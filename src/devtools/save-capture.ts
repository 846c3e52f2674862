import { createHash, randomBytes } from 'node:crypto';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { headerRecord, type CaptureFile } from './capture-format.js';

export interface CaptureInput {
  method: string;
  /** Path with query. */
  url: string;
  /** Node's `rawHeaders`: name, value, name, value, … */
  rawHeaders: readonly string[];
  body: Buffer;
  /** @default new Date() */
  receivedAt?: Date;
}

/**
 * Write one delivery into `dir` (created if needed), byte-exact; returns the file's path. Files
 * are named by receive time, so a listing is in arrival order, and written whole (temp + rename)
 * so a reader never sees half a capture.
 */
export async function saveCapture(dir: string, input: CaptureInput): Promise<string> {
  const receivedAt = (input.receivedAt ?? new Date()).toISOString();
  const rawHeaders: Array<[string, string]> = [];
  for (let i = 0; i + 1 < input.rawHeaders.length; i += 2) rawHeaders.push([input.rawHeaders[i]!, input.rawHeaders[i + 1]!]);
  const record: CaptureFile = {
    version: 1,
    receivedAt,
    method: input.method,
    url: input.url,
    headers: headerRecord(rawHeaders),
    rawHeaders,
    bodyBase64: input.body.toString('base64'),
    bodyBytes: input.body.length,
    bodySha256: createHash('sha256').update(input.body).digest('hex'),
  };
  await mkdir(dir, { recursive: true });
  const name = `${receivedAt.replace(/[:.]/g, '-')}-${randomBytes(3).toString('hex')}.json`;
  const file = join(dir, name);
  await writeFile(`${file}.tmp`, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
  await rename(`${file}.tmp`, file);
  return file;
}

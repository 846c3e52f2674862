import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigError } from '../errors/index.js';
import { CaptureFileSchema, type CapturedDelivery } from './capture-format.js';

export interface ReadCapturesResult {
  /** In arrival order. */
  captures: CapturedDelivery[];
  /** Files that are not captures, or whose body no longer matches its checksum. */
  skipped: Array<{ file: string; reason: string }>;
}

/** Every capture `checkout-kit capture` wrote into `dir`. Throws `ConfigError` when `dir` cannot be read. */
export async function readCaptures(dir: string): Promise<ReadCapturesResult> {
  let names: string[];
  try {
    names = (await readdir(dir)).filter((name) => name.endsWith('.json')).sort();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new ConfigError(
      code === 'ENOENT'
        ? `No captures folder ${dir}: run \`checkout-kit capture\` and send it a test delivery first.`
        : `Cannot read the captures folder ${dir}: ${(error as Error).message}`,
    );
  }
  const captures: CapturedDelivery[] = [];
  const skipped: ReadCapturesResult['skipped'] = [];
  for (const name of names) {
    const file = join(dir, name);
    let json: unknown;
    try {
      json = JSON.parse(await readFile(file, 'utf8'));
    } catch (error) {
      skipped.push({ file, reason: `not JSON (${(error as Error).message})` });
      continue;
    }
    const parsed = CaptureFileSchema.safeParse(json);
    if (!parsed.success) {
      skipped.push({ file, reason: 'not a capture file' });
      continue;
    }
    const body = Buffer.from(parsed.data.bodyBase64, 'base64');
    if (createHash('sha256').update(body).digest('hex') !== parsed.data.bodySha256) {
      skipped.push({ file, reason: 'body does not match bodySha256 (edited?)' });
      continue;
    }
    const { receivedAt, method, url, headers } = parsed.data;
    captures.push({ file, receivedAt, method, url, headers, body });
  }
  return { captures, skipped };
}

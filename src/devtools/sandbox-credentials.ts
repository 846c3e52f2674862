import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { ConfigError } from '../errors/index.js';
import { CREDENTIALS_FILE, type SandboxCredentials } from '../sandbox/index.js';

const Keys = z.looseObject({ apiKey: z.string(), signingSecret: z.string() });
const Environment = z.looseObject({
  partner: Keys,
  merchant: z.looseObject({ merchantId: z.string(), apiKey: z.string(), signingSecret: z.string(), invoiceKey: z.string() }),
});
const CredentialsSchema = z.looseObject({ baseUrl: z.string(), webhookSecret: z.string(), test: Environment, live: Environment });

/**
 * `DIR/credentials.json`, which a running sandbox writes on start. Throws
 * `ConfigError` when it is missing or not in that shape.
 */
export async function readSandboxCredentials(dataDir: string): Promise<SandboxCredentials> {
  const file = join(resolve(dataDir), CREDENTIALS_FILE);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new ConfigError(
      code === 'ENOENT'
        ? `No sandbox credentials at ${file}: start the sandbox (checkout-kit sandbox --data ${dataDir}) or point --data at its folder.`
        : `Cannot read ${file}: ${(error as Error).message}`,
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new ConfigError(`${file} is not JSON: restart the sandbox to rewrite it.`);
  }
  const result = CredentialsSchema.safeParse(parsed);
  if (!result.success)
    throw new ConfigError(`${file} is not a sandbox credentials file (${result.error.issues[0]?.message ?? 'bad shape'}): restart the sandbox to rewrite it.`);
  return result.data;
}

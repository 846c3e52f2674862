import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Environment } from '../schemas/index.js';
import type { SandboxData } from './records.js';

export const CREDENTIALS_FILE = 'credentials.json';

/** The sandbox's seeded partner and merchant keys of one environment. */
export interface EnvironmentCredentials {
  partner: { apiKey: string; signingSecret: string };
  merchant: { merchantId: string; apiKey: string; signingSecret: string; invoiceKey: string };
}

/** `DATA/credentials.json`: the sandbox's URL, its webhook secret and the keys of its seeded test and live accounts. */
export interface SandboxCredentials {
  baseUrl: string;
  webhookSecret: string;
  test: EnvironmentCredentials;
  live: EnvironmentCredentials;
}

function forEnvironment(data: SandboxData, environment: Environment): EnvironmentCredentials {
  const partner = data.partners.find((p) => p.environment === environment);
  const merchant = data.merchants.find((m) => m.environment === environment && m.keys);
  if (!partner || !merchant?.keys) throw new Error(`sandbox state has no seeded ${environment} accounts`);
  return {
    partner: { apiKey: partner.apiKey, signingSecret: partner.signingSecret },
    merchant: { merchantId: merchant.merchantId, ...merchant.keys },
  };
}

export function credentialsOf(data: SandboxData, baseUrl: string): SandboxCredentials {
  return { baseUrl, webhookSecret: data.webhookSecret, test: forEnvironment(data, 'test'), live: forEnvironment(data, 'live') };
}

/** Write the credentials file (mode 0600: it holds secrets); returns its path. */
export async function writeCredentials(dataDir: string, credentials: SandboxCredentials): Promise<string> {
  const file = join(dataDir, CREDENTIALS_FILE);
  await writeFile(file, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
  return file;
}

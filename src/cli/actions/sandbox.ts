import { createLogger } from '../../log/index.js';
import { startSandbox, type SandboxOptions } from '../../sandbox/index.js';
import { DEFAULT_SANDBOX_PORT } from '../defaults.js';
import { portNumber } from '../flags.js';
import { writeLine, type CliIO } from '../io.js';
import { untilSignal } from '../signals.js';

export interface SandboxFlags {
  port?: number;
  host?: string;
  data: string;
  webhookUrl: string[];
  drop?: number;
  duplicate?: number;
  reorder?: boolean;
  delay?: number;
  staleTimestamp?: number;
  seed?: number;
  expiresIn?: number;
  json?: boolean;
}

function optionsFrom(flags: SandboxFlags, io: CliIO): SandboxOptions {
  const port = flags.port ?? (io.env.PORT ? portNumber('PORT')(io.env.PORT) : DEFAULT_SANDBOX_PORT);
  return {
    port,
    host: flags.host ?? io.env.HOST ?? '127.0.0.1',
    dataDir: flags.data,
    webhookUrls: flags.webhookUrl,
    faults: { drop: flags.drop, duplicate: flags.duplicate, reorder: flags.reorder, delayMs: flags.delay, staleTimestamp: flags.staleTimestamp, seed: flags.seed },
    expiresAfterMs: flags.expiresIn,
    logger: createLogger({ level: io.env.LOG_LEVEL ?? 'warn', destination: io.stderr }),
  };
}

/** `checkout-kit sandbox`: run the local service until SIGINT/SIGTERM. */
export async function sandbox(flags: SandboxFlags, io: CliIO): Promise<void> {
  const stopped = untilSignal();
  const sandbox = await startSandbox(optionsFrom(flags, io));
  if (flags.json) {
    writeLine(io.stdout, JSON.stringify({ url: sandbox.url, credentialsPath: sandbox.credentialsPath, dataDir: sandbox.dataDir, webhookUrls: flags.webhookUrl, seed: sandbox.seed }));
  } else {
    writeLine(io.stdout, `sandbox listening on ${sandbox.url}`);
    writeLine(io.stdout, `credentials: ${sandbox.credentialsPath}`);
    writeLine(io.stdout, flags.webhookUrl.length ? `webhooks: ${flags.webhookUrl.join(', ')} (fault seed ${sandbox.seed})` : 'webhooks: none (add --webhook-url URL)');
    writeLine(io.stdout, 'press Ctrl+C to stop');
  }
  const signal = await stopped;
  await sandbox.close();
  if (!flags.json) writeLine(io.stdout, `sandbox stopped (${signal})`);
}

import { dirname, join, resolve } from 'node:path';
import { writeDotenvValues, type ConnectionRole, type DotenvWrite } from '../../config/index.js';
import { sandboxEnv } from '../../devtools/sandbox-env.js';
import { ConfigError } from '../../errors/index.js';
import { createLogger } from '../../log/index.js';
import { startSandbox, type SandboxHandle, type SandboxOptions } from '../../sandbox/index.js';
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
  /** `--write-env [file]`: true without a file (then `.env`). */
  writeEnv?: string | true;
  printEnv?: boolean;
  /** `--partner`: the env lines connect as the test partner. */
  partner?: boolean;
  json?: boolean;
}

/** The `.env` a shop beside the sandbox reads, unless `--write-env` names another file. */
const DEFAULT_ENV_FILE = '.env';

function optionsFrom(flags: SandboxFlags, io: CliIO): SandboxOptions {
  const port = flags.port ?? (io.env.PORT ? portNumber('PORT')(io.env.PORT) : DEFAULT_SANDBOX_PORT);
  return {
    port,
    host: flags.host ?? io.env.HOST ?? '127.0.0.1',
    dataDir: flags.data,
    webhookUrls: flags.webhookUrl,
    faults: {
      drop: flags.drop,
      duplicate: flags.duplicate,
      reorder: flags.reorder,
      delayMs: flags.delay,
      staleTimestamp: flags.staleTimestamp,
      seed: flags.seed,
    },
    expiresAfterMs: flags.expiresIn,
    logger: createLogger({ level: io.env.LOG_LEVEL ?? 'warn', destination: io.stderr }),
  };
}

/**
 * `--write-env`: the connection lines of the sandbox's test merchant (or partner) set in the file (created from
 * the `.env.example` beside it when missing), every other line kept.
 */
async function writeEnv(sandbox: SandboxHandle, target: string | true, role: ConnectionRole, io: CliIO): Promise<DotenvWrite> {
  const file = resolve(io.cwd, target === true ? DEFAULT_ENV_FILE : target);
  try {
    return await writeDotenvValues(file, sandboxEnv(sandbox.credentials, role), { template: join(dirname(file), '.env.example') });
  } catch (error) {
    // A sandbox the shop cannot be pointed at is no use: stop it and say why.
    await sandbox.close();
    const code = (error as NodeJS.ErrnoException).code;
    throw new ConfigError(
      `--write-env cannot write ${file} (${code ?? (error as Error).message}): give a file in a folder that exists and that you may write to.`,
      { cause: error },
    );
  }
}

function envFileLine(written: DotenvWrite): string {
  if (written.set.length === 0) return `env: ${written.file} already has the sandbox's ${written.unchanged.join(', ')}`;
  return `env: ${written.created ? 'created' : 'updated'} ${written.file} (${written.set.join(', ')})`;
}

/** `checkout-kit sandbox`: run the local service until SIGINT/SIGTERM. */
export async function sandbox(flags: SandboxFlags, io: CliIO): Promise<void> {
  const stopped = untilSignal();
  const sandbox = await startSandbox(optionsFrom(flags, io));
  const role: ConnectionRole = flags.partner ? 'partner' : 'merchant';
  const envFile = flags.writeEnv === undefined ? undefined : await writeEnv(sandbox, flags.writeEnv, role, io);
  const env = flags.printEnv ? sandboxEnv(sandbox.credentials, role) : undefined;
  if (flags.json) {
    writeLine(
      io.stdout,
      JSON.stringify({
        url: sandbox.url,
        credentialsPath: sandbox.credentialsPath,
        dataDir: sandbox.dataDir,
        webhookUrls: flags.webhookUrl,
        seed: sandbox.seed,
        envFile,
        env,
      }),
    );
  } else {
    for (const [name, value] of Object.entries(env ?? {})) writeLine(io.stdout, `${name}=${value}`);
    writeLine(io.stdout, `sandbox listening on ${sandbox.url}`);
    writeLine(io.stdout, `credentials: ${sandbox.credentialsPath}`);
    if (envFile) writeLine(io.stdout, envFileLine(envFile));
    writeLine(
      io.stdout,
      flags.webhookUrl.length ? `webhooks: ${flags.webhookUrl.join(', ')} (fault seed ${sandbox.seed})` : 'webhooks: none (add --webhook-url URL)',
    );
    writeLine(io.stdout, 'press Ctrl+C to stop');
  }
  const signal = await stopped;
  await sandbox.close();
  if (!flags.json) writeLine(io.stdout, `sandbox stopped (${signal})`);
}

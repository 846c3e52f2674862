import { Option, type Command } from 'commander';
import { createLogger } from '../../log/index.js';
import { startSandbox, type SandboxOptions } from '../../sandbox/index.js';
import { writeLine, type CliIO } from '../io.js';
import type { Register } from '../register.js';
import { duration, listenHost, portNumber, probability, wholeNumber } from '../flags.js';
import { untilSignal } from '../signals.js';

/** Default port when neither --port nor PORT is given. */
export const DEFAULT_SANDBOX_PORT = 4010;

interface SandboxFlags {
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

/** `checkout-kit sandbox`: run the local service until SIGINT/SIGTERM (contract 4 and 6). */
export const registerSandbox: Register = (program: Command, io: CliIO) => {
  program
    .command('sandbox')
    .description('run a local implementation of the service: every operation, a hosted checkout page, simulation endpoints and webhooks')
    .option('--port <n>', `port to listen on (0: any free port) (default: $PORT or ${DEFAULT_SANDBOX_PORT})`, portNumber('--port'))
    .option('--host <host>', 'loopback address to listen on (default: $HOST or 127.0.0.1)', listenHost('--host', { loopbackOnly: true }))
    .option('--data <dir>', 'state and credentials.json directory', '.sandbox')
    .option('--webhook-url <url>', 'send every event to this URL (repeatable)', (value: string, previous: string[]) => [...previous, value], [] as string[])
    .option('--drop <p>', 'never deliver an event to a URL, with probability p', probability('--drop'))
    .option('--duplicate <p>', 'deliver an event twice, with probability p', probability('--duplicate'))
    .option('--reorder', 'hold events briefly and deliver each batch shuffled')
    .option('--delay <ms>', 'wait this long before delivering each event', wholeNumber('--delay'))
    .option('--stale-timestamp <p>', 'sign with a timestamp one hour old, with probability p', probability('--stale-timestamp'))
    .option('--seed <n>', 'seed of the fault injection, for reproducible runs', wholeNumber('--seed'))
    .addOption(new Option('--expires-in <duration>', 'lifetime of new payments and invoices, e.g. 90s, 30m (default: 30m)').argParser(duration('--expires-in', 's')))
    .option('--json', 'print the startup information as one JSON line')
    .action(async (flags: SandboxFlags) => {
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
    });
};

import { Option, type Command } from '../commander.js';
import { roleVariables } from '../../config/variables.js';
import type { SandboxFlags } from '../actions/sandbox.js';
import { DEFAULT_SANDBOX_DATA, DEFAULT_SANDBOX_PORT } from '../defaults.js';
import type { CliIO } from '../io.js';
import type { Register } from '../register.js';
import { duration, listenHost, MAX_TIMER_MS, portNumber, probability, wholeNumber } from '../flags.js';

/** `checkout-kit sandbox`: run the local service until SIGINT/SIGTERM (contract 4 and 6). */
export const registerSandbox: Register = (program: Command, io: CliIO) => {
  program
    .command('sandbox')
    .description('run a local implementation of the service: every operation, a hosted checkout page, simulation endpoints and webhooks')
    .option('--port <n>', `port to listen on (0: any free port) (default: $PORT or ${DEFAULT_SANDBOX_PORT})`, portNumber('--port'))
    .option('--host <host>', 'loopback address to listen on (default: $HOST or 127.0.0.1)', listenHost('--host', { loopbackOnly: true }))
    .option('--data <dir>', 'state and credentials.json directory', DEFAULT_SANDBOX_DATA)
    .option('--webhook-url <url>', 'send every event to this URL (repeatable)', (value: string, previous: string[]) => [...previous, value], [] as string[])
    .option('--drop <p>', 'never deliver an event to a URL, with probability p', probability('--drop'))
    .option('--duplicate <p>', 'deliver an event twice, with probability p', probability('--duplicate'))
    .option('--reorder', 'hold events briefly and deliver each batch shuffled')
    // A timer takes at most 2³¹ − 1 ms: Node fires a longer one at once, with a warning.
    .option('--delay <ms>', 'wait this long before delivering each event', wholeNumber('--delay', { max: MAX_TIMER_MS }))
    .option('--stale-timestamp <p>', 'sign with a timestamp one hour old, with probability p', probability('--stale-timestamp'))
    .option('--seed <n>', 'seed of the fault injection, for reproducible runs', wholeNumber('--seed'))
    .addOption(
      new Option('--expires-in <duration>', 'lifetime of new payments and invoices, e.g. 90s, 30m (default: 30m)').argParser(duration('--expires-in', 's')),
    )
    .option(
      '--write-env [file]',
      `on start, set ${roleVariables('merchant').join(', ')} in this .env file to the sandbox's and its test merchant's (default: .env; created from the .env.example beside it; every other line kept; mode 0600)`,
    )
    .option(
      '--partner',
      `with --write-env or --print-env: connect as the sandbox's test partner instead (${roleVariables('partner').join(', ')}; the merchant's keys emptied)`,
    )
    .option('--print-env', 'on start, print those lines (NAME=value)')
    .option('--json', 'print the startup information as one JSON line')
    .action(async (flags: SandboxFlags) => (await import('../actions/sandbox.js')).sandbox(flags, io));
};

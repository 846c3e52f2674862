import { Command, CommanderError } from 'commander';
import { EXIT, exitCodeFor, formatError } from './exit.js';
import { processIO, type CliIO } from './io.js';
import { registerSandbox } from './commands/sandbox.js';
import { registerServe } from './commands/serve.js';
import { registerReconcile } from './commands/reconcile.js';
import { registerEvents } from './commands/events.js';
import { registerResources } from './commands/resources.js';
import { registerRuns } from './commands/runs.js';
import { registerDoctor } from './commands/doctor.js';
import { registerDemo } from './commands/demo.js';
import { registerMigrate } from './commands/migrate.js';
import { registerReplay } from './commands/replay.js';
import { registerTrigger } from './commands/trigger.js';
import { registerCapture } from './commands/capture.js';
import { registerProbeSignature } from './commands/probe-signature.js';
import { registerInit } from './commands/init.js';
import { registerStore } from './commands/store.js';
import { registerConsole } from './commands/console.js';
import { registerCheck } from './commands/check.js';
import { registerMerchants } from './commands/merchants.js';
import type { Register } from './register.js';
import { kitVersion, VERSION_FLAGS } from './version.js';

/** Every command, in the order `--help` lists them. */
const COMMANDS: Register[] = [
  registerInit,
  registerServe,
  registerReconcile,
  registerSandbox,
  registerEvents,
  registerResources,
  registerRuns,
  registerMerchants,
  registerDoctor,
  registerDemo,
  registerMigrate,
  registerReplay,
  registerTrigger,
  registerCapture,
  registerProbeSignature,
  registerStore,
  registerConsole,
  registerCheck,
];

/** Build the program (exposed for tests). */
export function buildProgram(io: CliIO, setExit: (code: number) => void): Command {
  const program = new Command()
    .name('checkout-kit')
    .description('Take crypto payments through the hosted checkout without losing or double-fulfilling an order.')
    .option('--verbose', 'print stack traces with errors')
    .version(kitVersion(), VERSION_FLAGS.join(', '), 'print the version of checkout-kit')
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
    });
  for (const register of COMMANDS) register(program, io, setExit);
  return program;
}

/** Run the CLI with `argv` (as process.argv); resolves to the exit code. */
export async function run(argv: string[], io: CliIO = processIO()): Promise<number> {
  let code: number = EXIT.ok;
  const program = buildProgram(io, (next) => {
    code = Math.max(code, next);
  });
  if (argv.length <= 2) {
    program.outputHelp();
    return EXIT.ok;
  }
  try {
    await program.parseAsync(argv);
    return code;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version print and exit 0; every other commander error is a usage error.
      return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    io.stderr.write(`${formatError(error, argv.includes('--verbose'))}\n`);
    return exitCodeFor(error);
  }
}

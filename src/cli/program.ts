import { Command, CommanderError } from './commander.js';
import { EXIT, exitCodeFor, formatError } from './exit.js';
import { processIO, type CliIO } from './io.js';
import type { Register } from './register.js';
import { kitVersion, VERSION_FLAGS } from './version.js';

/** A command module: the top-level commands it adds, and how to load it. */
interface CommandModule {
  names: readonly string[];
  load: () => Promise<Register>;
}

/**
 * Every command module, in the order `--help` lists them. A command line that names one loads only
 * that module (and its action only when it runs): `events list` does not load the other seventeen.
 * `names` must be what the module adds; a test registers each module alone and compares.
 */
export const COMMANDS: readonly CommandModule[] = [
  { names: ['init'], load: async () => (await import('./commands/init.js')).registerInit },
  { names: ['serve'], load: async () => (await import('./commands/serve.js')).registerServe },
  { names: ['reconcile'], load: async () => (await import('./commands/reconcile.js')).registerReconcile },
  { names: ['sandbox'], load: async () => (await import('./commands/sandbox.js')).registerSandbox },
  { names: ['events'], load: async () => (await import('./commands/events.js')).registerEvents },
  { names: ['payments', 'invoices'], load: async () => (await import('./commands/resources.js')).registerResources },
  { names: ['runs', 'retry'], load: async () => (await import('./commands/runs.js')).registerRuns },
  { names: ['merchants'], load: async () => (await import('./commands/merchants.js')).registerMerchants },
  { names: ['doctor'], load: async () => (await import('./commands/doctor.js')).registerDoctor },
  { names: ['demo'], load: async () => (await import('./commands/demo.js')).registerDemo },
  { names: ['migrate'], load: async () => (await import('./commands/migrate.js')).registerMigrate },
  { names: ['replay'], load: async () => (await import('./commands/replay.js')).registerReplay },
  { names: ['trigger'], load: async () => (await import('./commands/trigger.js')).registerTrigger },
  { names: ['capture'], load: async () => (await import('./commands/capture.js')).registerCapture },
  { names: ['probe-signature'], load: async () => (await import('./commands/probe-signature.js')).registerProbeSignature },
  { names: ['store'], load: async () => (await import('./commands/store.js')).registerStore },
  { names: ['console'], load: async () => (await import('./commands/console.js')).registerConsole },
  { names: ['check'], load: async () => (await import('./commands/check.js')).registerCheck },
];

/** The command module a command line names (its first word that is not an option), if any. */
function moduleNamedBy(argv: readonly string[]): CommandModule | undefined {
  const word = argv.slice(2).find((arg) => !arg.startsWith('-'));
  return word === undefined ? undefined : COMMANDS.find((module) => module.names.includes(word));
}

/** Build the program with `modules` (every command unless told; exposed for tests). */
export async function buildProgram(io: CliIO, setExit: (code: number) => void, modules: readonly CommandModule[] = COMMANDS): Promise<Command> {
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
  for (const register of await Promise.all(modules.map((module) => module.load()))) register(program, io, setExit);
  return program;
}

/** Run the CLI with `argv` (as process.argv); resolves to the exit code. */
export async function run(argv: string[], io: CliIO = processIO()): Promise<number> {
  // `help <name>` of no command says what `checkout-kit <name>` would (unknown, and the likely one),
  // not every command's help.
  const [, , first, helpOf] = argv;
  if (first === 'help' && helpOf !== undefined && !helpOf.startsWith('-') && !COMMANDS.some((module) => module.names.includes(helpOf))) {
    return run([...argv.slice(0, 2), ...argv.slice(3)], io);
  }
  let code: number = EXIT.ok;
  // Help, a mistyped command and a bare `checkout-kit` need every command; a named one, only its own.
  const named = moduleNamedBy(argv);
  const program = await buildProgram(
    io,
    (next) => {
      code = Math.max(code, next);
    },
    named ? [named] : COMMANDS,
  );
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

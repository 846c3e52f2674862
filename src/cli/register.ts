import type { Command } from 'commander';
import type { CliIO } from './io.js';

/**
 * A command module: adds itself to the program. Commands resolve to an exit code, raised through
 * `setExit`. Its own module, so `program.ts` and the commands import it without importing each other.
 *
 * A command module defines only the command (names, flags, help text) and imports only what that
 * needs; its action loads what it runs with `import('../actions/<command>.js')` when it runs, so
 * `--version`, `--help` and each command load only their own code.
 */
export type Register = (program: Command, io: CliIO, setExit: (code: number) => void) => void;

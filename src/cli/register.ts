import type { Command } from 'commander';
import type { CliIO } from './io.js';

/**
 * A command module: adds itself to the program. Commands resolve to an exit code, raised through
 * `setExit`. Its own module, so `program.ts` and the commands import it without importing each other.
 */
export type Register = (program: Command, io: CliIO, setExit: (code: number) => void) => void;

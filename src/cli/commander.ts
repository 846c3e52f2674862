import { createRequire } from 'node:module';

// Through require(): commander is CommonJS, and importing it as an ES module costs every command
// another parse of its source (a fifth of the time it takes to load).
const commander = createRequire(import.meta.url)('commander') as typeof import('commander');

/** commander's classes, loaded once for the program and the commands that build their own options. */
export const { Command, CommanderError, Option } = commander;
export type Command = import('commander').Command;
